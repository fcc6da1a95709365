//! Barrier (MPI_Barrier) by dissemination (Hensgen, Finkel and Manber 1988): in round k every
//! rank signals rank + 2^k and waits for rank - 2^k; after ceil(log2 p) rounds every rank has
//! heard, directly or not, from all others. Cost: ceil(log2 p) (alpha + beta * 0).

use super::tags;
use crate::{Comm, Result};

impl Comm {
    /// Blocks until every rank of the communicator has called it (MPI_Barrier).
    ///
    /// ```
    /// rpar::run(4, |world| world.barrier())?;
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn barrier(&self) -> Result<()> {
        let (p, r) = (self.size(), self.rank());
        let ctx = self.collective_context();
        let mut dist = 1;
        while dist < p {
            let empty: [u8; 0] = [];
            let mut none: [u8; 0] = [];
            self.sendrecv_in(
                ctx,
                &empty[..],
                (r + dist) % p,
                tags::BARRIER,
                &mut none[..],
                (r + p - dist) % p,
                tags::BARRIER,
            )?;
            dist *= 2;
        }
        Ok(())
    }
}
