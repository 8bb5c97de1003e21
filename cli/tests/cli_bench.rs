//! `dyng bench` end to end on the smallest plan (usroads only, one run per case): a line per case
//! on stderr, the three outputs written, the JSON valid with the fields for every case,
//! and the Markdown says where each target stands, naming the targets this plan cannot measure.

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

    // Not on a terminal: a line per case and per stream on stderr, as each ends.
    assert_eq!(stderr.lines().filter(|l| l.starts_with("usroads ") && l.contains(": update ") && l.contains(" ms, recompute ")).count(), 6, "{stderr}");
    assert_eq!(stderr.lines().filter(|l| l.starts_with("usroads stream of 2 local 10000 batches t=")).count(), 2, "{stderr}");
    assert!(stderr.contains("notice: 1 runs per case: below 5 the report has no intervals"), "{stderr}");

    let text = std::fs::read_to_string(out.join("quick.json")).expect("quick.json");
    let json: serde_json::Value = serde_json::from_str(&text).expect("quick.json is valid JSON");
    assert_eq!(json["suite"], "quick");
    for field in ["cpu", "cores", "memory_bytes", "dyng_version", "core_round_trip_ns", "core_round_trip_worst_us"] {
        assert!(json["machine"].get(field).is_some(), "machine.{field} missing: {text}");
    }
    let cases = json["cases"].as_array().expect("a cases array");
    assert_eq!(cases.len(), 6, "usroads: safe, unsafe and local 10K at 1 and 2 threads");
    for c in cases {
        assert_eq!(c["graph"], "usroads");
        assert_eq!(c["k"], 3);
        assert_eq!(c["source"], 531);
        assert_eq!(c["size"], 10000);
        assert_eq!(c["workspace_bytes_per_vertex"], 38.0);
        assert!(c["fallback_used"].is_boolean(), "{c}");
        for field in [
            "update_ms", "recompute_ms", "dijkstra_ms", "mosp_ms", "affected", "invalidated", "peak_rss_bytes",
            "update_over_recompute", "update_over_recompute_paired",
        ] {
            assert!(c[field].is_number(), "{field} is not a number in {c}");
        }
        assert_eq!(c["update_runs_ms"].as_array().map(Vec::len), Some(1), "{c}");
        assert_eq!(c["recompute_runs_ms"].as_array().map(Vec::len), Some(1), "{c}");
        // One run gives no interval (`bench::interval::MIN_RUNS`).
        assert!(c["update_over_recompute_ci90"].is_null(), "{c}");
    }
    for batch in ["safe", "unsafe", "local"] {
        for threads in [1, 2] {
            let n = cases.iter().filter(|c| c["batch"] == batch && c["threads"] == threads).count();
            assert_eq!(n, 1, "{batch} t={threads}");
        }
    }
    // One stream per thread count, after the cases.
    let streams = json["streams"].as_array().expect("a streams array");
    assert_eq!(streams.len(), 2, "{text}");
    for (t, st) in streams.iter().enumerate() {
        assert_eq!(st["graph"], "usroads");
        assert_eq!(st["batch"], "local");
        assert_eq!(st["size"], 10000);
        assert_eq!(st["batches"], 2);
        assert_eq!(st["threads"], t + 1);
        for field in ["mosp_ms", "mosp_recompute_ms", "costs_ms", "combined_in_place"] {
            assert!(st[field].is_number(), "{field} missing in {st}");
        }
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

#[test]
fn bench_refuses_zero_runs_and_defaults_to_enough_runs_for_intervals() {
    let run = dyng().args(["bench", "quick", "--runs", "0"]).output().expect("run dyng bench");
    assert_eq!(run.status.code(), Some(2), "{}", String::from_utf8_lossy(&run.stderr));
    let help = dyng().args(["bench", "--help"]).output().expect("run dyng bench --help");
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(help.contains("[default: 5]"), "{help}");
}

#[test]
fn bench_latency_runs_the_sizes_asked_for_and_reports_the_constant_term() {
    let out = std::env::temp_dir().join(format!("dyng-bench-latency-test-{}", std::process::id()));
    let run = dyng()
        .args(["bench", "latency", "--only", "usroads", "--threads", "1", "--sizes", "1,10", "--out"])
        .arg(&out)
        .output()
        .expect("run dyng bench latency");
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "dyng bench latency failed: {stderr}");
    let text = std::fs::read_to_string(out.join("latency.json")).expect("latency.json");
    let json: serde_json::Value = serde_json::from_str(&text).expect("latency.json is valid JSON");
    let cases = json["latency"]["cases"].as_array().expect("latency cases");
    // Traffic, congestion and closures, of 1 and 10 changes, and no other.
    assert_eq!(cases.len(), 6, "{text}");
    for c in cases {
        assert!(c["size"] == 1 || c["size"] == 10, "{c}");
        assert_eq!(c["batches"], 8, "{c}");
    }
    let graphs = json["latency"]["graphs"].as_array().expect("latency graphs");
    assert_eq!(graphs.len(), 1, "{text}");
    let g = &graphs[0];
    assert!(g["unchanged_updates"].is_u64(), "{g}");
    let unchanged = g["unchanged_updates"].as_u64().unwrap_or(0);
    // The updates that changed nothing have a median exactly when there are some.
    assert_eq!(g["unchanged_ms"].is_number(), unchanged > 0, "{g}");
    assert!(g["fit"].is_null() || g["fit"]["a_ms"].is_number(), "{g}");
    let md = std::fs::read_to_string(out.join("latency.md")).expect("latency.md");
    assert!(md.contains("| a ms | unchanged ms (updates) |"), "{md}");
    assert!(md.contains("- memory of the resident graph's rows (slack and room) on usroads, 1 thread(s): "), "{md}");
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn bench_refuses_a_batch_size_it_does_not_run_before_any_work() {
    let run = dyng().args(["bench", "latency", "--sizes", "5", "--only", "usroads"]).output().expect("run dyng bench");
    assert_eq!(run.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(stderr.contains("--sizes 5: no latency case of this suite has that size (its sizes: 1, 10, 100, 1000, 10000)"), "{stderr}");
    assert!(!stderr.contains("building"), "refused before building a graph: {stderr}");
}
