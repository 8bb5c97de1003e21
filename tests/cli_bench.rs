//! `dyng bench` end to end on the smallest plan (usroads only, one run per case): the three
//! outputs are written, the JSON has the fields for every case, and the Markdown says
//! where each target stands, naming the targets this plan cannot measure.

use std::process::Command;

fn dyng() -> Command {
    Command::new(env!("CARGO_BIN_EXE_dyng"))
}

#[test]
fn bench_quick_on_usroads_writes_json_markdown_svg_and_the_targets() {
    let out = std::env::temp_dir().join(format!("dyng-bench-test-{}", std::process::id()));
    let run = dyng()
        .args(["bench", "quick", "--only", "usroads", "--runs", "1", "--threads", "1,2", "--stream-batches", "2", "--out"])
        .arg(&out)
        .output()
        .expect("run dyng bench");
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "dyng bench failed: {stderr}");

    let json = std::fs::read_to_string(out.join("quick.json")).expect("quick.json");
    assert!(json.starts_with("{\"suite\": \"quick\", \"machine\": {"), "{json}");
    let machine = json.lines().next().unwrap_or("");
    assert!(machine.contains("\"core_round_trip_ns\": [") && machine.contains("\"core_round_trip_worst_us\": ["), "{machine}");
    let cases: Vec<&str> = json.lines().filter(|l| l.contains("\"graph\": ") && l.contains("\"update_ms\": ")).collect();
    assert_eq!(cases.len(), 6, "usroads: safe, unsafe and local 10K at 1 and 2 threads");
    for field in [
        "\"graph\": \"usroads\"", "\"k\": 3", "\"source\": 531", "\"size\": 10000", "\"update_ms\": ", "\"recompute_ms\": ",
        "\"dijkstra_ms\": ", "\"mosp_ms\": ", "\"affected\": ", "\"invalidated\": ", "\"fallback_used\": ",
        "\"workspace_bytes_per_vertex\": 38.0000", "\"peak_rss_bytes\": ",
        "\"update_over_recompute\": ", "\"update_over_recompute_paired\": ", "\"update_runs_ms\": [", "\"recompute_runs_ms\": [",
    ] {
        assert!(cases.iter().all(|c| c.contains(field)), "{field} missing in some case:\n{json}");
    }
    for batch in ["safe", "unsafe", "local"] {
        for threads in [1, 2] {
            let tag = format!("\"batch\": \"{batch}\", \"size\": 10000");
            let thr = format!("\"threads\": {threads},");
            assert_eq!(cases.iter().filter(|c| c.contains(&tag) && c.contains(&thr)).count(), 1, "{batch} t={threads}");
        }
    }
    // One run gives no interval (`bench::interval::MIN_RUNS`); every time is finite.
    assert!(cases.iter().all(|c| c.contains("\"update_over_recompute_ci90\": null,")), "{json}");
    assert!(!json.replace("\"update_over_recompute_ci90\": null,", "").contains("null"), "every time is finite: {json}");
    // One stream per thread count, after the cases.
    let streams: Vec<&str> = json.split("\"streams\": [").nth(1).expect("a streams array").lines().filter(|l| l.contains("\"graph\": ")).collect();
    assert_eq!(streams.len(), 2, "{json}");
    for (t, line) in streams.iter().enumerate() {
        for field in ["\"graph\": \"usroads\"", "\"batch\": \"local\"", "\"size\": 10000", "\"batches\": 2,", "\"mosp_ms\": ", "\"mosp_recompute_ms\": ", "\"costs_ms\": ", "\"combined_in_place\": "] {
            assert!(line.contains(field), "{field} missing in {line}");
        }
        assert!(line.contains(&format!("\"threads\": {},", t + 1)), "{line}");
    }

    let md = std::fs::read_to_string(out.join("quick.md")).expect("quick.md");
    assert!(md.contains("\nHost: core-to-core round trip "), "{md}");
    let table = md.split("### Streams (steady state)").nth(1).expect("a streams section");
    assert_eq!(table.lines().filter(|l| l.starts_with("| usroads | 10000 |")).count(), 2, "{table}");
    let targets = md.split("### Targets in this run").nth(1).expect("a targets section");
    for line in [
        "- update <= 1.05x recompute on every case, ratio of medians: ",
        "- update <= 1.05x recompute on every case, median of paired runs: ",
        "- local 10K update <= 0.2x recompute (usroads, grid): ",
    ] {
        let l = targets.lines().find(|l| l.starts_with(line)).unwrap_or_else(|| panic!("no line {line:?}:\n{targets}"));
        let verdict = &l[line.len()..];
        assert!(verdict.starts_with("met (") || verdict.starts_with("missed ("), "{l}");
    }
    // Read with the run's noise, one run resolves nothing.
    let noise = "- update <= 1.05x recompute on every case, read with this run's noise (90 % bootstrap intervals): unresolved (0 of 6 cases resolved against it, 6 not resolved by this run; not resolved: usroads safe 10000 t=1 (no interval)";
    assert!(targets.contains(noise), "{targets}");
    assert!(targets.contains("static >= 2x faster than Dijkstra on the grid at 2 threads: unmeasured"), "{targets}");
    assert!(targets.contains("2 threads faster than 1 on the 50K batches: unmeasured"), "{targets}");
    assert_eq!(targets.matches("2 threads faster than 1 on the 50K batches").count(), 1, "one line when unmeasured: {targets}");
    assert!(targets.contains("workspace <= 38 B/vertex shared by the K objectives: met (38 B/vertex)"), "{targets}");
    let svg = std::fs::read_to_string(out.join("quick.svg")).expect("quick.svg");
    assert!(svg.starts_with("<svg") && svg.matches("<rect").count() == 6, "{svg}");
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn bench_refuses_an_unknown_graph() {
    let run = dyng().args(["bench", "quick", "--only", "nosuch"]).output().expect("run dyng bench");
    assert_eq!(run.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(stderr.contains("Error: ") && stderr.contains("nosuch"), "{stderr}");
}
