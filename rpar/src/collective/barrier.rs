//! Barrier (MPI_Barrier) by dissemination (Hensgen, Finkel and Manber 1988): in round k every
//! rank signals rank + 2^k and waits for rank - 2^k; after ceil(log2 p) rounds every rank has
//! heard, directly or not, from all others. Cost: ceil(log2 p) (alpha + beta * 0).

use super::{tags, Channel};
use crate::comm::Call;
use crate::{Comm, Result};

impl Comm {
    /// Blocks until every rank of the communicator has called it (MPI_Barrier).
    ///
    /// ```
    /// rpar::run(4, |world| world.barrier())?;
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn barrier(&self) -> Result<()> {
        self.collective(Call::new("barrier"), &"Dissemination", || {
            let (p, r) = (self.size(), self.rank());
            let mut dist = 1;
            while dist < p {
                let (to, from) = ((r + dist) % p, (r + p - dist) % p);
                Channel::sendrecv::<u8, u8>(
                    self,
                    &[],
                    to,
                    tags::BARRIER,
                    &mut [],
                    from,
                    tags::BARRIER,
                )?;
                dist *= 2;
            }
            Ok(())
        })
    }
}
