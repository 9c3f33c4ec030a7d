//! What several of this crate's test files share: blackbox_exporter's own module files.

use std::path::PathBuf;
use std::process::Command;

/// The directory of blackbox_exporter at `version` (`"v0.28.0"`) as the Go module proxy serves
/// it, downloaded once into the Go module cache: its own `blackbox.yml`, `example.yml` and
/// `config/testdata/` are read from there, not copied into this repository. The go command is
/// a test requirement (ci/test.sh installs it); without it, or when the download fails, the
/// test fails saying so.
pub fn blackbox_module_dir(version: &str) -> PathBuf {
    let module = format!("github.com/prometheus/blackbox_exporter@{version}");
    let out = Command::new("go")
        .args(["mod", "download", "-json", &module])
        .env("GOFLAGS", "-mod=mod")
        .output()
        .expect("this test needs the go command (to fetch blackbox_exporter's example files)");
    let json = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "go mod download: {json}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dir = json
        .lines()
        .find_map(|l| l.trim().strip_prefix("\"Dir\": \"")?.strip_suffix("\","))
        .unwrap_or_else(|| panic!("no Dir in go mod download's answer: {json}"));
    PathBuf::from(dir)
}
