//! The Mandelbrot kernel of the manager-worker example: escape-time iterations per pixel over an
//! off-centre view, so that rows cost very different amounts. Shared with the library's test
//! of the same farms (tests/pattern_manager_worker.rs), which includes this file.

/// The part of the plane drawn, its resolution and the iteration limit.
#[derive(Debug, Clone, Copy)]
pub(crate) struct View {
    /// Pixels per row.
    pub(crate) width: usize,
    /// Rows.
    pub(crate) height: usize,
    /// Iterations before a point counts as in the set.
    pub(crate) max_iter: u32,
}

impl View {
    // The region drawn: its left, top corner and its size; off-centre in y, so that the set
    // fills the lower part of the image and static blocks are badly balanced.
    const X0: f64 = -2.1;
    const Y0: f64 = 1.35;
    const SPAN_X: f64 = 3.0;
    const SPAN_Y: f64 = 1.8;

    /// Escape-time iterations at pixel (col, row): the cost of the pixel, too.
    pub(crate) fn pixel(&self, col: usize, row: usize) -> u32 {
        let cx = Self::X0 + (col as f64 + 0.5) * Self::SPAN_X / self.width as f64;
        let cy = Self::Y0 - (row as f64 + 0.5) * Self::SPAN_Y / self.height as f64;
        let (mut x, mut y, mut n) = (0.0f64, 0.0f64, 0);
        while n < self.max_iter && x * x + y * y <= 4.0 {
            (x, y) = (x * x - y * y + cx, 2.0 * x * y + cy);
            n += 1;
        }
        n
    }

    /// One row of the image: the task of the row-by-row farms.
    pub(crate) fn row(&self, row: usize) -> Vec<u32> {
        (0..self.width).map(|col| self.pixel(col, row)).collect()
    }

    /// The whole image, row by row, computed sequentially: the reference.
    pub(crate) fn sequential(&self) -> Vec<Vec<u32>> {
        (0..self.height).map(|row| self.row(row)).collect()
    }
}

/// The work a row (or any run of pixels) took: its iterations.
pub(crate) fn iterations(pixels: &[u32]) -> u64 {
    pixels.iter().map(|&n| u64::from(n)).sum()
}
