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

    /// Number of ranks: the matrix is `ranks() x ranks()`, indexed by world rank.
    ///
    /// ```
    /// let report = rpar::Universe::new(4).record_matrix(true).run_report(|_| Ok(()))?;
    /// let m = report.matrix.unwrap();
    /// assert_eq!((m.ranks(), m.total_messages()), (4, 0));
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn ranks(&self) -> usize {
        self.n
    }

    /// Messages sent from world rank `from` to world rank `to`.
    ///
    /// # Panics
    ///
    /// If `from` or `to` is not below [`ranks`](CommMatrix::ranks).
    ///
    /// ```
    /// let report = rpar::Universe::new(3).record_matrix(true).run_report(|w| {
    ///     match w.rank() {
    ///         0 => (0..5).try_for_each(|i| w.send(&i, 1, 0)),
    ///         1 => (0..5).try_for_each(|_| w.recv::<i32>(0, 0).map(drop)),
    ///         _ => Ok(()),
    ///     }
    /// })?;
    /// let m = report.matrix.unwrap();
    /// assert_eq!((m.messages(0, 1), m.messages(1, 0), m.messages(0, 2)), (5, 0, 0));
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn messages(&self, from: usize, to: usize) -> u64 {
        self.cells[from * self.n + to].0
    }

    /// Bytes sent from world rank `from` to world rank `to`.
    ///
    /// # Panics
    ///
    /// If `from` or `to` is not below [`ranks`](CommMatrix::ranks).
    ///
    /// ```
    /// let report = rpar::Universe::new(2).record_matrix(true).run_report(|w| {
    ///     if w.rank() == 1 {
    ///         w.send(&[0.0f64; 100][..], 0, 0)?;
    ///     } else {
    ///         w.recv::<f64>(1, 0)?;
    ///     }
    ///     Ok(())
    /// })?;
    /// let m = report.matrix.unwrap();
    /// assert_eq!((m.bytes(1, 0), m.bytes(0, 1)), (800, 0));
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn bytes(&self, from: usize, to: usize) -> u64 {
        self.cells[from * self.n + to].1
    }

    /// All bytes sent, collective traffic included.
    ///
    /// ```
    /// let report = rpar::Universe::new(4).record_matrix(true).run_report(|w| {
    ///     w.using(rpar::Bcast::Linear).bcast(&mut [0u8; 1000][..], 0)
    /// })?;
    /// // a linear broadcast: the root sends the 1000 bytes to each of the 3 others
    /// assert_eq!(report.matrix.unwrap().total_bytes(), 3 * 1000);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn total_bytes(&self) -> u64 {
        self.cells.iter().map(|c| c.1).sum()
    }

    /// All messages sent, collective traffic included.
    ///
    /// ```
    /// let report = rpar::Universe::new(4).record_matrix(true).run_report(|w| {
    ///     let (r, p) = (w.rank(), w.size());
    ///     w.sendrecv(&r, (r + 1) % p, 0, &mut 0usize, (r + p - 1) % p, 0)?;
    ///     Ok(())
    /// })?;
    /// assert_eq!(report.matrix.unwrap().total_messages(), 4); // one per rank round the ring
    /// # Ok::<(), rpar::Error>(())
    /// ```
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
