//! Helpers for tests that call the C ABI's exported functions from Rust.
#![allow(dead_code)]

use dyng::ffi::*;
use std::ptr;

/// The calling thread's last error message.
pub fn last_error() -> String {
    let mut buf = vec![0u8; 1024];
    // SAFETY: buf is writable for its length.
    let len = unsafe { dyng_last_error_message(buf.as_mut_ptr() as *mut _, buf.len()) };
    buf.truncate(len.min(buf.len()).saturating_sub(1));
    String::from_utf8_lossy(&buf).into_owned()
}

/// `Ok` for `DYNG_OK`, else the status and the last error message.
pub fn ok(s: dyng_status_t, what: &str) -> Result<(), String> {
    if s == DYNG_OK {
        return Ok(());
    }
    Err(format!("{what}: status {s}: {}", last_error()))
}

/// Copies a view of `array`/`k` of `r` out (and releases the view).
///
/// # Safety
/// `res` and `r` are live handles.
pub unsafe fn view<T: Copy>(
    res: *const dyng_resources_t,
    r: *const dyng_result_t,
    array: u32,
    k: u32,
) -> Result<Vec<T>, String> {
    let mut v = ptr::null_mut();
    // SAFETY: caller contract; `v` is writable.
    ok(unsafe { dyng_result_view(res, r, array, k, &mut v) }, "dyng_result_view")?;
    let (mut data, mut len, mut dtype) = (ptr::null(), 0usize, 0u32);
    // SAFETY: `v` is the live view just created; the outs are writable.
    ok(unsafe { dyng_view_data(v, &mut data, &mut len, &mut dtype) }, "dyng_view_data")?;
    assert_eq!(std::mem::size_of::<T>(), if dtype == DYNG_DTYPE_INT64 { 8 } else { 4 });
    // SAFETY: the view holds `len` elements of its dtype until released.
    let out = unsafe { std::slice::from_raw_parts(data as *const T, len) }.to_vec();
    // SAFETY: released once, after its last use.
    unsafe { dyng_view_release(v) };
    Ok(out)
}

/// What one golden case gives through the C ABI: the output files and the counters the API
/// reports (after adoption, after combining, from `dyng_update`, and after the update).
pub struct GoldenRun {
    pub files: Vec<(String, Vec<u8>)>,
    pub counters: Vec<String>,
}

fn counters(what: &str, s: &dyng_update_stats_t) -> String {
    format!(
        "{what}: invalidated={} affected={} iterations={} epochs={} pushes={} packed={} fallback={}",
        s.invalidated, s.affected, s.iterations, s.epochs, s.pushes, s.packed_parents, s.fallback_used
    )
}

/// `dyng_result_info`'s counters of `r`.
///
/// # Safety
/// `r` is a live result handle.
unsafe fn info_counters(r: *const dyng_result_t, what: &str) -> Result<String, String> {
    // SAFETY: plain C struct; zeroed is a valid value.
    let mut ri: dyng_result_info_t = unsafe { std::mem::zeroed() };
    ri.struct_size = std::mem::size_of::<dyng_result_info_t>();
    // SAFETY: caller contract; `ri` is writable.
    ok(unsafe { dyng_result_info(r, &mut ri) }, "dyng_result_info")?;
    Ok(counters(what, &ri.last_stats))
}

/// Runs one golden case through `res` as a C program holding its own trees does: graph and
/// batch read by dyng, trees adopted with `dyng_sssp_from_arrays`, combined with
/// `dyng_mosp_from_trees`, one `dyng_update`, every output array read through views. Everything
/// but `res` is freed before returning (a worker holds one graph at a time).
///
/// # Safety
/// `res` is a live resources handle.
pub unsafe fn run_golden_case(res: *const dyng_resources_t, case: &super::Case) -> Result<GoldenRun, String> {
    use std::ffi::CString;
    let mut graph = ptr::null_mut();
    let mut batch = ptr::null_mut();
    let mut results: Vec<*mut dyng_result_t> = Vec::new();
    // SAFETY (closure): live handles, valid C strings, writable outs; freed below.
    let outcome = (|| -> Result<GoldenRun, String> {
        unsafe {
            let prefix = CString::new(case.graph.to_str().unwrap()).unwrap();
            let mut gopt = dyng_read_options_default();
            gopt.k = case.k.unwrap_or(0) as u32;
            ok(dyng_graph_read(res, prefix.as_ptr(), DYNG_FORMAT_CSR_TEXT, &gopt, &mut graph), "dyng_graph_read")?;
            let mut info = dyng_graph_info_t { struct_size: std::mem::size_of::<dyng_graph_info_t>(), n: 0, m: 0, k: 0, version: 0 };
            ok(dyng_graph_info(graph, &mut info), "dyng_graph_info")?;
            let (n, kg) = (info.n, info.k as usize);
            let k = case.k.map_or(kg, |k| k.min(kg));
            if case.source >= n {
                return Err(format!("source {} outside n = {n}", case.source));
            }
            let trees = dyng::io::driver::case::read_init_trees(&case.init, k, n).map_err(|e| e.to_string())?;
            let mut counters_seen = Vec::new();
            for (j, (d, p)) in trees.iter().enumerate() {
                let mut r = ptr::null_mut();
                ok(
                    dyng_sssp_from_arrays(res, graph, case.source as i32, j as u32, d.as_ptr(), p.as_ptr(), case.canonicalize, &mut r),
                    "dyng_sssp_from_arrays",
                )?;
                results.push(r);
                counters_seen.push(info_counters(r, &format!("tree {j} adopted"))?);
            }
            let trees_c: Vec<*const dyng_result_t> = results.iter().map(|&r| r as *const _).collect();
            let mut mosp = ptr::null_mut();
            ok(
                dyng_mosp_from_trees(res, graph, case.source as i32, trees_c.as_ptr(), k, case.pref.as_ptr(), case.pref.len(), &mut mosp),
                "dyng_mosp_from_trees",
            )?;
            results.push(mosp);
            counters_seen.push(info_counters(mosp, "mosp combined")?);
            let dir = CString::new(case.changes.to_str().unwrap()).unwrap();
            ok(dyng_batch_read(dir.as_ptr(), graph, &mut batch), "dyng_batch_read")?;
            let mut b: dyng_batch_t = std::mem::zeroed();
            b.struct_size = std::mem::size_of::<dyng_batch_t>();
            ok(dyng_batch_buffer_get(batch, &mut b), "dyng_batch_buffer_get")?;
            let mut st = dyng_update_stats_t { struct_size: std::mem::size_of::<dyng_update_stats_t>(), ..Default::default() };
            ok(dyng_update(res, graph, &b, &mosp, 1, &mut st), "dyng_update")?;
            counters_seen.push(counters("mosp update", &st));
            counters_seen.push(info_counters(mosp, "mosp after update")?);

            let mut files = Vec::new();
            for j in 0..k as u32 {
                let d: Vec<i64> = view(res, mosp, DYNG_ARRAY_DISTANCES, j)?;
                let p: Vec<i32> = view(res, mosp, DYNG_ARRAY_PARENTS, j)?;
                files.push((format!("obj{j}/distancesUpdated.txt"), dyng::io::formats::trees::format_distances(&d)));
                files.push((format!("obj{j}/SSSPTreeUpdated.txt"), dyng::io::formats::trees::format_parents(&p)));
            }
            let cd: Vec<i64> = view(res, mosp, DYNG_ARRAY_COMBINED_DISTANCES, 0)?;
            let cp: Vec<i32> = view(res, mosp, DYNG_ARRAY_COMBINED_PARENTS, 0)?;
            let costs: Vec<i64> = view(res, mosp, DYNG_ARRAY_PATH_COSTS, 0)?;
            files.push(("combinedGraph/distancesCsr.txt".into(), dyng::io::formats::trees::format_distances(&cd)));
            files.push(("combinedGraph/SSSPTreeCsr.txt".into(), dyng::io::formats::trees::format_parents(&cp)));
            files.push(("combinedGraph/mospCosts.txt".into(), dyng::io::formats::trees::format_costs(n, kg, &costs)));
            Ok(GoldenRun { files, counters: counters_seen })
        }
    })();
    // SAFETY: NULL or live handles created above; _free(NULL) is a no-op.
    unsafe {
        for &r in &results {
            dyng_result_free(r);
        }
        dyng_batch_buffer_free(batch);
        dyng_graph_free(graph);
    }
    outcome
}
