//! A farm's outcome as a rank result ([`RankResult`]): so that a run returning it works on the
//! MPI transport, where results travel between processes.

use super::{Farm, FarmStats, ManagerStats, WorkerStats};
use crate::{RankResult, Result, ResultLink};
use std::time::Duration;

/// A duration travels as whole seconds and nanoseconds.
impl RankResult for Duration {
    fn send_result(&self, link: &ResultLink<'_>) -> Result<()> {
        (self.as_secs(), self.subsec_nanos()).send_result(link)
    }
    fn recv_result(link: &ResultLink<'_>) -> Result<Self> {
        let (secs, nanos) = RankResult::recv_result(link)?;
        Ok(Duration::new(secs, nanos))
    }
}

impl RankResult for WorkerStats {
    fn send_result(&self, link: &ResultLink<'_>) -> Result<()> {
        (self.rank, self.tasks, self.chunks).send_result(link)?;
        (self.busy, self.waiting).send_result(link)
    }
    fn recv_result(link: &ResultLink<'_>) -> Result<Self> {
        let (rank, tasks, chunks) = RankResult::recv_result(link)?;
        let (busy, waiting) = RankResult::recv_result(link)?;
        Ok(WorkerStats {
            rank,
            tasks,
            chunks,
            busy,
            waiting,
        })
    }
}

impl RankResult for ManagerStats {
    fn send_result(&self, link: &ResultLink<'_>) -> Result<()> {
        (self.requests, self.returns, self.queued).send_result(link)?;
        (self.busy, self.idle).send_result(link)
    }
    fn recv_result(link: &ResultLink<'_>) -> Result<Self> {
        let (requests, returns, queued) = RankResult::recv_result(link)?;
        let (busy, idle) = RankResult::recv_result(link)?;
        Ok(ManagerStats {
            requests,
            returns,
            queued,
            busy,
            idle,
        })
    }
}

impl RankResult for FarmStats {
    fn send_result(&self, link: &ResultLink<'_>) -> Result<()> {
        self.elapsed.send_result(link)?;
        self.workers.send_result(link)?;
        self.manager.send_result(link)
    }
    fn recv_result(link: &ResultLink<'_>) -> Result<Self> {
        Ok(FarmStats {
            elapsed: RankResult::recv_result(link)?,
            workers: RankResult::recv_result(link)?,
            manager: RankResult::recv_result(link)?,
        })
    }
}

impl<R: RankResult> RankResult for Farm<R> {
    fn send_result(&self, link: &ResultLink<'_>) -> Result<()> {
        self.results.send_result(link)?;
        self.stats.send_result(link)
    }
    fn recv_result(link: &ResultLink<'_>) -> Result<Self> {
        Ok(Farm {
            results: RankResult::recv_result(link)?,
            stats: RankResult::recv_result(link)?,
        })
    }
}
