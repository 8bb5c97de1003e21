//! `update` of a session's graph: the batch applied once and every listed result brought up to
//! date, in process (`crate::update`) or in the worker (UPDATE, with the host mirror applied in
//! step). Every listed result must live where the graph does.

use super::graph::SessionGraph;
use super::result::{Held, SessionResult};
use crate::error::{Error, Result};
use crate::graph::BatchView;
use crate::resources::Resources;
use crate::graph::stale::{stale_message, staleness, Stale};
use crate::update::{update, ResultMut};

/// Receives result i's counters once the update went through.
pub(crate) type StatsSink<'a> = &'a mut dyn FnMut(usize, &crate::sssp::UpdateStats);

impl SessionGraph {
    /// Applies `batch` once and updates every result of `results`; with `stats`, each result's
    /// counters are handed to it in order. Everything is validated before anything changes.
    pub(crate) fn update(
        &mut self,
        res: &Resources,
        batch: &BatchView<'_>,
        results: &mut [&mut SessionResult],
        stats: Option<StatsSink<'_>>,
        func: &str,
    ) -> Result<()> {
        if self.worker.is_some() {
            return self.update_in_worker(batch, results, stats, func);
        }
        if let Some(i) = results.iter().position(|r| r.in_worker().is_some()) {
            return Err(Error::invalid(format!(
                "dyng: {func}: results[{i}] is resident in a worker but g is an in-process graph; \
                 list only results of g"
            )));
        }
        let mut list: Vec<ResultMut<'_>> = results
            .iter_mut()
            // Worker results were refused above, so nothing is skipped here.
            .filter_map(|r| match &mut r.held {
                Held::Sssp(s) => Some(ResultMut::Sssp(s)),
                Held::Mosp(m) => Some(ResultMut::Mosp(m)),
                Held::Worker(_) => None,
            })
            .collect();
        let all = update(res, &mut self.graph, batch, &mut list)?;
        drop(list);
        for (r, s) in results.iter_mut().zip(&all) {
            r.last_stats = *s;
        }
        if let Some(sink) = stats {
            for (i, s) in all.iter().enumerate() {
                sink(i, s);
            }
        }
        Ok(())
    }

    /// The worker's update: every listed result must be a current worker result of this graph.
    /// The batch is validated and applied to the host mirror first (the in-process messages, and
    /// nothing sent for a bad batch), then sent once as UPDATE; the mirror is committed when the
    /// worker committed. The results' counters are then unknown until asked for: with `stats`
    /// they are read (STATS); if that read fails the update stays applied and the error says so.
    fn update_in_worker(
        &mut self,
        batch: &BatchView<'_>,
        results: &mut [&mut SessionResult],
        stats: Option<StatsSink<'_>>,
        func: &str,
    ) -> Result<()> {
        let Some(rg) = &self.worker else {
            return Err(Error::Internal(format!("dyng: {func}: graph is not in a worker")));
        };
        let graph = &mut self.graph;
        let mut ids = Vec::with_capacity(results.len());
        for (i, r) in results.iter().enumerate() {
            let Some(rr) = r.in_worker() else {
                return Err(Error::invalid(format!(
                    "dyng: {func}: results[{i}] is an in-process result but g is resident in a worker; \
                     local and worker results cannot be mixed"
                )));
            };
            if let Some(why) = staleness(rr.state(), graph) {
                return Err(stale_in_worker(why, i, func));
            }
            ids.push(rr.id);
        }
        graph.apply_uncommitted(batch)?;
        let sent = rg.client.update(batch, &ids);
        // The client applies a batch exactly when it reports success: a failed update leaves its
        // journal and the worker's graph without the batch, so the mirror goes back as it was.
        if sent.is_err() {
            graph.undo();
        } else {
            graph.commit();
            for r in results.iter_mut() {
                if let Held::Worker(rr) = &mut r.held {
                    rr.updated(graph.version());
                }
            }
        }
        sent?;
        if let Some(sink) = stats {
            for (i, r) in results.iter().enumerate() {
                // The result is current, so only the worker's conditions can fail this read;
                // they say the update itself went through.
                let applied = |m: String| {
                    format!("dyng: {func}: the update was applied, but reading the counters of results[{i}] failed: {m}")
                };
                let s = r.last_stats().map_err(|e| match e {
                    Error::WorkerLost(m) => Error::WorkerLost(applied(m)),
                    Error::Timeout(m) => Error::Timeout(applied(m)),
                    e => e,
                })?;
                sink(i, &s);
            }
        }
        Ok(())
    }
}

/// The worker update's error for a stale result `i` (decided by `staleness` and worded by
/// `stale_message`, as in process).
fn stale_in_worker(why: Stale, i: usize, func: &str) -> Error {
    Error::StaleResult(stale_message(why, &format!("dyng: {func}: results[{i}]")))
}
