#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Every example binary answers `--help` and `--version` and exits 0 without side effects: the
//! demo agent, run in an empty directory, creates no database there and opens no port.

use std::path::Path;
use std::process::{Command, Output};
use std::sync::mpsc;
use std::time::Duration;

/// The safety net around a binary that should exit at once (never used to order things).
const TIMEOUT: Duration = Duration::from_secs(60);

const BINARIES: [(&str, &str); 6] = [
    ("demo-agent", env!("CARGO_BIN_EXE_demo-agent")),
    ("webhook-receiver", env!("CARGO_BIN_EXE_webhook-receiver")),
    ("client", env!("CARGO_BIN_EXE_client")),
    ("extensions", env!("CARGO_BIN_EXE_extensions")),
    ("secure-passport", env!("CARGO_BIN_EXE_secure-passport")),
    ("traceability", env!("CARGO_BIN_EXE_traceability")),
];

/// Runs `bin arg` in `dir`; fails the test if it has not exited within [`TIMEOUT`].
fn run(bin: &str, arg: &str, dir: &Path) -> Output {
    let mut command = Command::new(bin);
    command
        .arg(arg)
        .current_dir(dir)
        .env_remove("A2A_STORE")
        .env_remove("A2A_ADDR");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(command.output());
    });
    rx.recv_timeout(TIMEOUT)
        .unwrap_or_else(|_| panic!("{bin} {arg} did not exit"))
        .unwrap()
}

#[test]
fn every_binary_answers_help_and_version_and_does_nothing_else() {
    for (name, bin) in BINARIES {
        let dir = std::env::temp_dir().join(format!("a2a-help-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for arg in ["--help", "-h"] {
            let out = run(bin, arg, &dir);
            assert!(out.status.success(), "{name} {arg}: {out:?}");
            let text = String::from_utf8(out.stdout).unwrap();
            assert!(
                text.starts_with(&format!("usage: {name}")),
                "{name} {arg}: {text}"
            );
        }
        for arg in ["--version", "-V"] {
            let out = run(bin, arg, &dir);
            assert!(out.status.success(), "{name} {arg}: {out:?}");
            let text = String::from_utf8(out.stdout).unwrap();
            assert_eq!(
                text.trim(),
                format!("{name} {}", env!("CARGO_PKG_VERSION")),
                "{name} {arg}"
            );
        }
        let left: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
        assert!(left.is_empty(), "{name} left files behind: {left:?}");
        std::fs::remove_dir(&dir).unwrap();
    }
}
