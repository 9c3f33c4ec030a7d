#!/usr/bin/env python3
"""serve_probe's outside measurement: plain keep-alive HTTP clients (Python http.client, 4
threads x 2,500 /probe each, after 100 each of warm-up; three repetitions alternating the
two exporters), each exporter's own utime+stime from /proc/PID/stat over the
measured requests only. Usage: bench/serve_plain_clients.py PROBER_BIN BLACKBOX_BIN NGINX_HOSTPORT"""
import http.client, os, subprocess, sys, tempfile, threading, time, re

prober_bin, blackbox_bin, target = sys.argv[1:4]
hz = os.sysconf("SC_CLK_TCK")
work = tempfile.mkdtemp(prefix="plain-clients-")
conf = os.path.join(work, "blackbox.yml")
open(conf, "w").write("modules:\n  http_2xx:\n    prober: http\n    timeout: 5s\n    http:\n      preferred_ip_protocol: ip4\n")

def cpu(pid):
    s = open(f"/proc/{pid}/stat").read()
    f = s[s.rindex(")") + 2:].split()
    return (int(f[11]) + int(f[12])) / hz

def start(cmd, pattern, log):
    out = open(log, "w")
    p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    for _ in range(100):
        m = re.search(pattern, open(log).read())
        if m: return p, m.group(1)
        time.sleep(0.1)
    raise SystemExit(f"{cmd[0]} did not start: {open(log).read()}")

def load(addr, clients, per_client):
    host, port = addr.rsplit(":", 1)
    bad = []
    def run():
        c = http.client.HTTPConnection(host, int(port), timeout=30)
        for _ in range(per_client):
            c.request("GET", f"/probe?module=http_2xx&target=http://{target}/")
            r = c.getresponse(); body = r.read()
            if r.status != 200 or b"probe_success 1" not in body: bad.append(r.status)
        c.close()
    ts = [threading.Thread(target=run) for _ in range(clients)]
    for t in ts: t.start()
    for t in ts: t.join()
    if bad: raise SystemExit(f"{len(bad)} answers without probe_success 1 from {addr}")

prober, paddr = start([prober_bin, "serve", "--config", conf, "--listen", "127.0.0.1:0"],
                      r"listening on http://([0-9.:]+)", os.path.join(work, "serve.log"))
bb, baddr = start([blackbox_bin, "--config.file", conf, "--web.listen-address", "127.0.0.1:19115"],
                  r"address=(127\.0\.0\.1:19115)", os.path.join(work, "bb.log"))
results = {"prober": [], "blackbox_exporter": []}
try:
    for rep in range(3):
        for name, p, addr in (("prober", prober, paddr), ("blackbox_exporter", bb, baddr)):
            load(addr, 4, 100)  # warm-up
            before = cpu(p.pid)
            load(addr, 4, 2500)
            us = (cpu(p.pid) - before) * 1e6 / 10000
            results[name].append(us)
            print(f"# rep {rep+1}: {name} cpu_us_per_probe={us:.1f}", flush=True)
finally:
    prober.terminate(); bb.terminate()
med = {k: sorted(v)[1] for k, v in results.items()}
print(f"prober {med['prober']:.1f} us, blackbox_exporter {med['blackbox_exporter']:.1f} us per /probe (medians of 3)")
print(f"RATIO scenario=serve_probe_plain_clients metric=cpu_vs_blackbox_exporter value={med['prober']/med['blackbox_exporter']:.4f} target=<=0.1")
