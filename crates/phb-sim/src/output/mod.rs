//! What a run returns: tidy, columnar tables plus a few facts about the run.
//!
//! The tables are plain columns; [`parquet_file`] writes one as a Parquet
//! file with each column's documentation ([`columns`]) in its metadata, which
//! is how the Python package stores them and hands them out as DataFrames.

pub mod columns;
pub mod parquet_file;

/// One column of a table. Two columns are equal when they hold the same
/// values bit for bit, so that a NaN (a mean of nothing) equals itself and
/// two runs compare equal exactly when they would write the same file.
#[derive(Clone, Debug)]
pub enum Column {
    F64(Vec<f64>),
    U64(Vec<u64>),
    Str(Vec<String>),
}

impl PartialEq for Column {
    fn eq(&self, other: &Column) -> bool {
        match (self, other) {
            (Column::F64(a), Column::F64(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
            }
            (Column::U64(a), Column::U64(b)) => a == b,
            (Column::Str(a), Column::Str(b)) => a == b,
            _ => false,
        }
    }
}

impl Column {
    pub fn len(&self) -> usize {
        match self {
            Column::F64(v) => v.len(),
            Column::U64(v) => v.len(),
            Column::Str(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A named table: named columns of equal length.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Table {
    pub name: String,
    pub columns: Vec<(String, Column)>,
}

impl Table {
    pub fn new(name: &str) -> Table {
        Table { name: name.to_string(), columns: Vec::new() }
    }

    /// Adds a column; all columns must have the same length.
    pub fn push(&mut self, name: &str, column: Column) {
        if let Some((_, first)) = self.columns.first() {
            assert_eq!(first.len(), column.len(), "column '{name}' of table '{}' has the wrong length", self.name);
        }
        self.columns.push((name.to_string(), column));
    }

    pub fn rows(&self) -> usize {
        self.columns.first().map_or(0, |(_, c)| c.len())
    }

    pub fn column(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|(n, _)| n == name).map(|(_, c)| c)
    }
}

/// The result of one run.
#[derive(Clone, Debug, PartialEq)]
pub struct RunOutput {
    pub scenario: String,
    pub seed: u64,
    pub duration_s: f64,
    pub warmup_s: f64,
    /// Events the engine processed.
    pub events: u64,
    /// Packets offered to a link direction (its conditioner, loss element
    /// or qdisc), summed over the hops of every packet: the simulator's
    /// work in packets.
    pub packet_hops: u64,
    /// `classes` (per class and scope), `flows`, `transfers`, `timeseries`
    /// (long form; empty unless a sample interval is set), `delay_ratios`
    /// (empty unless `run.delay_ratios` asks), `counters`,
    /// `delay_histogram` and `conditioners`.
    pub tables: Vec<Table>,
    /// What the scenario will not measure as it seems to (`crate::advice`).
    pub warnings: Vec<String>,
}

impl RunOutput {
    pub fn table(&self, name: &str) -> Option<&Table> {
        self.tables.iter().find(|t| t.name == name)
    }
}
