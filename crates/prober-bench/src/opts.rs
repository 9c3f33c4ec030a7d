//! The command line of `prober-bench`: the scenario and its options.

use std::collections::HashMap;

use crate::measure::Line;

pub(crate) const USAGE: &str = "usage: prober-bench {tcp_oneshot|http_oneshot|https_oneshot|https_resume|https_threads|http_keepalive|\
https_keepalive|grpc_oneshot|grpc_keepalive|exec_oneshot|sched_10k|sched_100k|sched_100k_idle|cloudprober|sched_1m|netns_http|\
netns_exec|command_each|netns_scale|dns_query|icmp_echo} [--target HOST:PORT] [--hosts IP,...] [--name NAME] [--host HOST] [--path /] [--service NAME] [--n N] \
[--conc N] [--targets N] [--period-ms MS] [--duration-s S] [--argv PROG[,ARG...]] [--netns PATH] \
[--pid PID] [--per-run K] [--namespaces N] [--threads N] [--where netns|host] [--resumption 1|0] \
[--tls-max-version 1.2|1.3] [--bin PATH] [--gomaxprocs N] [--work DIR] [--label SCENARIO] [--impl NAME]";

/// The scenario and its `--key value` options, as given on the command line.
pub(crate) struct Opts {
    pub(crate) scenario: String,
    pub(crate) values: HashMap<String, String>,
}

impl Opts {
    pub(crate) fn parse() -> Result<Opts, String> {
        let mut args = std::env::args().skip(1);
        let scenario = args.next().ok_or_else(|| USAGE.to_string())?;
        let mut values = HashMap::new();
        while let Some(a) = args.next() {
            let Some(key) = a.strip_prefix("--") else {
                return Err(format!("unexpected {a}\n{USAGE}"));
            };
            let (key, value) = match key.split_once('=') {
                Some((k, v)) => (k.to_string(), v.to_string()),
                None => {
                    (key.to_string(), args.next().ok_or_else(|| format!("--{key} needs a value"))?)
                }
            };
            values.insert(key, value);
        }
        Ok(Opts { scenario, values })
    }

    pub(crate) fn str(&self, key: &str, default: &str) -> String {
        self.values.get(key).cloned().unwrap_or_else(|| default.to_string())
    }

    pub(crate) fn num(&self, key: &str, default: u64) -> Result<u64, String> {
        match self.values.get(key) {
            None => Ok(default),
            Some(v) => v.parse().map_err(|_| format!("--{key}: not a number: {v}")),
        }
    }

    pub(crate) fn target(&self) -> Result<(String, u16), String> {
        let t = self.values.get("target").ok_or("--target HOST:PORT is required")?;
        let (host, port) =
            t.rsplit_once(':').ok_or_else(|| format!("--target {t}: expected HOST:PORT"))?;
        let port = port.parse().map_err(|_| format!("--target {t}: bad port"))?;
        Ok((host.trim_start_matches('[').trim_end_matches(']').to_string(), port))
    }

    pub(crate) fn line(&self) -> Line {
        Line::new(&self.str("label", &self.scenario), &self.str("impl", "prober"))
    }
}
