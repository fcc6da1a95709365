//! The communication matrix: messages and bytes for every (sender, receiver) pair of world ranks.

use std::cell::RefCell;
use std::fmt;

/// One sender's counts, kept rank-locally while the run goes.
#[derive(Debug)]
pub(crate) struct MatrixRow {
    counts: RefCell<Vec<(u64, u64)>>,
}

impl MatrixRow {
    pub(crate) fn new(n: usize) -> Self {
        MatrixRow {
            counts: RefCell::new(vec![(0, 0); n]),
        }
    }

    /// Counts one message of `bytes` to world rank `to`.
    #[inline]
    pub(crate) fn count(&self, to: usize, bytes: usize) {
        let mut c = self.counts.borrow_mut();
        c[to].0 += 1;
        c[to].1 += bytes as u64;
    }

    pub(crate) fn take(&self) -> Vec<(u64, u64)> {
        self.counts.take()
    }
}

/// Messages and bytes sent from each world rank to each other (MPI tools call it the
/// communication matrix). Collective traffic is included: it is what the algorithms sent.
///
/// ```
/// let report = rpar::Universe::new(3).record_matrix(true).run_report(|w| {
///     if w.rank() == 0 {
///         w.send(&[0u8; 10][..], 2, 0)?;
///     } else if w.rank() == 2 {
///         w.recv::<u8>(0, 0)?;
///     }
///     Ok(())
/// })?;
/// let m = report.matrix.unwrap();
/// assert_eq!((m.messages(0, 2), m.bytes(0, 2)), (1, 10));
/// assert_eq!(m.total_bytes(), 10);
/// println!("{m}");
/// # Ok::<(), rpar::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommMatrix {
    n: usize,
    cells: Vec<(u64, u64)>,
}

impl CommMatrix {
    pub(crate) fn from_rows(rows: Vec<Vec<(u64, u64)>>) -> Self {
        let n = rows.len();
        let cells = rows.into_iter().flatten().collect();
        CommMatrix { n, cells }
    }

    /// Number of ranks.
    pub fn ranks(&self) -> usize {
        self.n
    }

    /// Messages sent from `from` to `to`.
    pub fn messages(&self, from: usize, to: usize) -> u64 {
        self.cells[from * self.n + to].0
    }

    /// Bytes sent from `from` to `to`.
    pub fn bytes(&self, from: usize, to: usize) -> u64 {
        self.cells[from * self.n + to].1
    }

    /// All bytes sent.
    pub fn total_bytes(&self) -> u64 {
        self.cells.iter().map(|c| c.1).sum()
    }

    /// All messages sent.
    pub fn total_messages(&self) -> u64 {
        self.cells.iter().map(|c| c.0).sum()
    }
}

impl fmt::Display for CommMatrix {
    /// A table of bytes (messages) with senders as rows and receivers as columns.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:>8}", "from\\to")?;
        for to in 0..self.n {
            write!(f, " {to:>14}")?;
        }
        writeln!(f)?;
        for from in 0..self.n {
            write!(f, "{from:>8}")?;
            for to in 0..self.n {
                let cell = format!("{} ({})", self.bytes(from, to), self.messages(from, to));
                write!(f, " {cell:>14}")?;
            }
            writeln!(f)?;
        }
        Ok(())
    }
}
