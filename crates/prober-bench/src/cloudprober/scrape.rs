//! Reading cloudprober's run counts from its Prometheus `/metrics` page: every TCP target's
//! `total` and `success` counters with the timestamp of the export that carried them.
//!
//! A target exports its counters every export interval (10 s at a 1 s period), not every run,
//! so a page read at a given instant is up to an interval behind for each target. Each
//! target's counter difference between two pages is divided by the difference of its own
//! export timestamps, which gives its exact run rate over that span whatever the lag; the sum
//! over the targets is cloudprober's run rate.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::time::Duration;

/// One counter value and the export time it carries (ms since the epoch), if any.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Sample {
    pub(crate) value: f64,
    pub(crate) ts_ms: Option<i64>,
}

/// The `total` and `success` counters of every TCP-probe series on one page, keyed by the
/// series' labels.
#[derive(Debug, Default)]
pub(crate) struct Page {
    pub(crate) total: HashMap<String, Sample>,
    pub(crate) success: HashMap<String, Sample>,
}

/// The page at `http://127.0.0.1:PORT/metrics`, its body as text (HTTP/1.0: the server
/// closes the connection after the answer, which is then read to its end).
pub(crate) fn get_metrics(port: u16, timeout: Duration) -> Result<String, String> {
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let mut s = TcpStream::connect_timeout(&addr, timeout).map_err(|e| format!("{addr}: {e}"))?;
    s.set_read_timeout(Some(timeout)).map_err(|e| e.to_string())?;
    s.write_all(b"GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
        .map_err(|e| format!("{addr}: {e}"))?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).map_err(|e| format!("{addr}: {e}"))?;
    let text = String::from_utf8_lossy(&raw);
    let (head, body) = text.split_once("\r\n\r\n").ok_or("no end of the HTTP header")?;
    let status = head.lines().next().unwrap_or("");
    if status.split_whitespace().nth(1) != Some("200") {
        return Err(format!("GET /metrics: {status}"));
    }
    Ok(body.to_string())
}

/// The counters of `text` (Prometheus text format): lines `total{...ptype="tcp"...} V [TS]`
/// and `success{...}`; everything else (comments, other metrics, system variables) skipped.
pub(crate) fn parse(text: &str) -> Page {
    let mut page = Page::default();
    for line in text.lines() {
        let Some((name, rest)) = line.split_once('{') else {
            continue;
        };
        let map = match name {
            "total" => &mut page.total,
            "success" => &mut page.success,
            _ => continue,
        };
        let Some((labels, values)) = rest.split_once('}') else {
            continue;
        };
        if !labels.contains("ptype=\"tcp\"") {
            continue;
        }
        let mut v = values.split_whitespace();
        let Some(value) = v.next().and_then(|x| x.parse::<f64>().ok()) else {
            continue;
        };
        let ts_ms = v.next().and_then(|x| x.parse::<i64>().ok());
        map.insert(labels.to_string(), Sample { value, ts_ms });
    }
    page
}

/// Runs per second summed over the series of `before` and `after` that carry timestamps
/// and were exported again in between, and how many series counted.
pub(crate) fn rate(
    before: &HashMap<String, Sample>,
    after: &HashMap<String, Sample>,
) -> (f64, u64) {
    let mut sum = 0.0;
    let mut counted = 0u64;
    for (key, b) in after {
        let Some(a) = before.get(key) else {
            continue;
        };
        let (Some(ta), Some(tb)) = (a.ts_ms, b.ts_ms) else {
            continue;
        };
        if tb > ta {
            sum += (b.value - a.value).max(0.0) / ((tb - ta) as f64 / 1000.0);
            counted += 1;
        }
    }
    (sum, counted)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: &str = "#TYPE total counter\n\
total{ptype=\"tcp\",probe=\"p0\",dst=\"t0\"} 10 1000000\n\
total{ptype=\"tcp\",probe=\"p0\",dst=\"t1\"} 20 1005000\n\
success{ptype=\"tcp\",probe=\"p0\",dst=\"t0\"} 9 1000000\n\
latency{ptype=\"tcp\",probe=\"p0\",dst=\"t0\"} 1234.5 1000000\n\
total{probe=\"sysvars\"} 99 1000000\n\
uptime_msec{probe=\"sysvars\"} 5000 1000000\n";

    #[test]
    fn reads_tcp_counters_only() {
        let p = parse(PAGE);
        assert_eq!(p.total.len(), 2);
        assert_eq!(p.success.len(), 1);
        let t0 = &p.total["ptype=\"tcp\",probe=\"p0\",dst=\"t0\""];
        assert_eq!(*t0, Sample { value: 10.0, ts_ms: Some(1_000_000) });
    }

    #[test]
    fn rate_divides_each_series_by_its_own_span() {
        let a = parse(PAGE).total;
        // t0: 30 runs over 30 s; t1: 15 runs over 30 s; t2 appears only later: not counted.
        let later = "total{ptype=\"tcp\",dst=\"t0\"} 40 1030000\n\
total{ptype=\"tcp\",dst=\"t1\"} 35 1035000\n\
total{ptype=\"tcp\",dst=\"t2\"} 5 1035000\n";
        let a: HashMap<String, Sample> =
            a.into_iter().map(|(k, v)| (k.replace(",probe=\"p0\"", ""), v)).collect();
        let (r, n) = rate(&a, &parse(later).total);
        assert_eq!(n, 2);
        assert!((r - 1.5).abs() < 1e-9, "{r}");
        // Not exported again in between: not counted.
        let (r, n) = rate(&a, &a);
        assert_eq!((r, n), (0.0, 0));
    }
}
