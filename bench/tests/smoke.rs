//! The harness still works: run it in smoke mode against our server and the floor (no timing is
//! asserted — only that every server answers correctly and the table comes out).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[test]
fn smoke_mode_runs_ours_and_the_floor() {
    let out_dir = std::env::temp_dir().join(format!("a2a-bench-smoke-{}", std::process::id()));
    let mut child = Command::new(env!("CARGO_BIN_EXE_a2a-bench"))
        .args([
            "--smoke",
            "--servers",
            "ours,ours3ext,ours10ext,floor",
            "--duration",
            "500ms",
            "--warmup",
            "100ms",
            "--out",
        ])
        .arg(&out_dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start a2a-bench");
    // Bounded: the harness must finish within two minutes.
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        if child.try_wait().expect("poll a2a-bench").is_some() {
            break;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("a2a-bench --smoke did not finish within 120 s");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let output = child.wait_with_output().expect("collect a2a-bench output");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "a2a-bench --smoke failed ({}):\n{stdout}\n{stderr}",
        output.status
    );
    for row in [
        "| SendMessage, 1 conn | ours |",
        "| SendMessage, 16 conns | ours+3ext |",
        "| SendMessage, 16 conns | ours+10ext |",
        "| SendMessage, 64 conns | floor (bare actix-web) |",
        "| GET agent card, 16 conns | ours |",
        "| SSE stream (100 chunks), 1 conn | ours |",
        "| memory: 1,000 tasks, 16 conns | ours |",
        "Targets (ours):",
    ] {
        assert!(
            stdout.contains(row),
            "missing {row:?} in:\n{stdout}\n{stderr}"
        );
    }
    // The extensions' cost was measured in pairs both ways (loaded together with ours, and
    // taking turns), each with its control.
    let paired = stdout
        .lines()
        .find(|l| l.contains("10 activated extensions cost"))
        .unwrap_or_default();
    assert!(
        paired.contains("measured in pairs")
            && paired.contains("loaded together with ours on the server core")
            && paired.contains("taking turns instead")
            && paired
                .matches("two identical servers of ours differ by")
                .count()
                == 2
            && paired.contains("the rounds' medians above say"),
        "{paired:?} in:\n{stdout}\n{stderr}"
    );
    assert!(out_dir.join("report.md").exists());
    let _ = std::fs::remove_dir_all(&out_dir);
}
