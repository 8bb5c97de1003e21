//! What users get needs nothing they do not have: the header, the user guides in docs/ and the
//! C examples name no developer-only document (the design specs, the shared corpus folder), every
//! link between the docs leads to a file and a heading that exist, and the header says what the
//! issue of a bare reader asked (units of the combined distances, MOSP sums, the stats default).

use std::path::PathBuf;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// The files a user of the installed library or the CLI reads.
fn user_files() -> Vec<String> {
    let mut files = vec![
        "include/dyng.h".to_string(),
        "docs/c-api.md".into(),
        "docs/formats.md".into(),
        "docs/python.md".into(),
        "docs/scale-out.md".into(),
    ];
    for e in std::fs::read_dir(root().join("examples-c")).unwrap() {
        let p = e.unwrap().path();
        if p.is_file() {
            files.push(format!("examples-c/{}", p.file_name().unwrap().to_string_lossy()));
        }
    }
    files
}

#[test]
fn user_facing_text_names_no_developer_only_document() {
    for f in user_files() {
        let text = read(&f);
        for banned in ["spec/", "../shared", "reference-behaviour", "c-api.md section", "worker-protocol", "sospUpdateCpu", "in this build."] {
            assert!(!text.contains(banned), "{f} mentions {banned:?}");
        }
    }
}

/// GitHub's anchor of a Markdown heading.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

#[test]
fn links_between_the_docs_lead_somewhere() {
    let mut checked = 0;
    for doc in ["docs/c-api.md", "docs/formats.md", "docs/worker.md", "docs/architecture.md", "docs/python.md", "docs/scale-out.md"] {
        let text = read(doc);
        for (i, _) in text.match_indices("](") {
            let target = &text[i + 2..];
            let target = &target[..target.find(')').expect("a closing parenthesis")];
            if target.starts_with("http") {
                continue;
            }
            let (file, frag) = target.split_once('#').unwrap_or((target, ""));
            let path = if file.is_empty() { doc.to_string() } else { format!("docs/{file}") };
            let linked = read(&path);
            if !frag.is_empty() {
                let anchors: Vec<String> = linked.lines().filter_map(|l| l.strip_prefix('#')).map(|h| anchor(h.trim_start_matches('#'))).collect();
                assert!(anchors.iter().any(|a| a == frag), "{doc}: no heading #{frag} in {path} (headings: {anchors:?})");
            }
            checked += 1;
        }
    }
    assert!(checked >= 10, "only {checked} links found");
}

#[test]
fn the_header_explains_units_sums_and_defaults() {
    let h = read("include/dyng.h");
    assert!(h.contains("struct dyng_update_stats_t dyng_update_stats_default(void);"), "the stats struct has a _default()");
    let combined = &h[..h.find("#define DYNG_ARRAY_COMBINED_DISTANCES").unwrap()];
    let combined = &combined[combined.rfind("/**").unwrap()..];
    assert!(combined.contains("least common multiple") && combined.contains("d / L"), "{combined}");
    let stats = &h[h.find("typedef struct dyng_update_stats_t").unwrap() - 400..];
    assert!(stats.contains("sum over its K objectives"), "MOSP sums are said next to the stats struct");
    let create = &h[..h.find("dyng_status_t dyng_resources_create(").unwrap()];
    let create = &create[create.rfind("/**").unwrap()..];
    assert!(create.contains("NVIDIA driver") && create.contains("naming what is missing"), "{create}");
}
