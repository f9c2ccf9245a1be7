//! The event log: one row per traced event, streamed to a Parquet file
//! while the run goes. Rows gather in columns of [`BATCH_ROWS`] and are
//! written as one Arrow record batch each; memory stays at one batch
//! whatever the run's length. A writer thread encodes and compresses the
//! batches, in order, while the simulation goes on (a channel of
//! [`BATCHES_IN_FLIGHT`] batches between them bounds the memory).
//!
//! Names (scope, class, flow, event, kind, colour, reason) are Arrow
//! dictionary columns over the scenario's names, so a row holds integers
//! only. Each column's description and unit ([`crate::output::columns`],
//! table `events`) is in its field metadata, as in the other tables.

use std::collections::HashMap;
use std::fs::File;
use std::io::BufWriter;
use std::path::Path;
use std::sync::mpsc::{sync_channel, SyncSender};
use std::sync::Arc;
use std::thread::JoinHandle;

use arrow_array::types::Int32Type;
use arrow_array::{ArrayRef, DictionaryArray, Float64Array, Int32Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, Encoding};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use parquet::schema::types::ColumnPath;

use crate::output::columns::column_doc;

/// Batches handed to the writer thread and not yet written, at most.
const BATCHES_IN_FLIGHT: usize = 2;

/// Rows buffered before they are written.
const BATCH_ROWS: usize = 1 << 12;

/// The event log's columns, in order: name and kind.
const COLUMNS: [(&str, Kind); 17] = [
    ("time_ns", Kind::Int),
    ("event", Kind::Names(Names::Event)),
    ("scope", Kind::Names(Names::Scope)),
    ("class", Kind::Names(Names::Class)),
    ("dscp", Kind::Int),
    ("ecn", Kind::Int),
    ("colour", Kind::Names(Names::Colour)),
    ("flow", Kind::Names(Names::Flow)),
    ("kind", Kind::Names(Names::PacketKind)),
    ("seq", Kind::Int),
    ("ack", Kind::Int),
    ("size_bytes", Kind::Int),
    ("cells", Kind::Int),
    ("reason", Kind::Names(Names::Reason)),
    ("backlog_pkts", Kind::Int),
    ("backlog_bytes", Kind::Int),
    ("red_avg", Kind::Float),
];

#[derive(Clone, Copy)]
enum Kind {
    Int,
    Float,
    Names(Names),
}

/// The name lists of the dictionary columns.
#[derive(Clone, Copy)]
enum Names {
    Event,
    Scope,
    Class,
    Colour,
    Flow,
    PacketKind,
    Reason,
}

/// The names a log's dictionary columns draw from.
pub struct Dictionaries {
    pub scopes: Vec<String>,
    pub classes: Vec<String>,
    pub flows: Vec<String>,
}

/// One event, as integers: the names are indices into [`Dictionaries`]
/// (and the fixed lists of events, packet kinds, colours and reasons).
#[derive(Clone, Copy, Debug, Default)]
pub struct Row {
    pub time_ns: u64,
    pub event: u8,
    pub scope: u32,
    pub class: u32,
    pub dscp: u8,
    pub ecn: u8,
    pub colour: u8,
    pub flow: u32,
    pub kind: u8,
    pub seq: u64,
    pub ack: u64,
    pub size: u32,
    pub cells: u32,
    /// 0 for none, else the drop reason's index in `DropReason::ALL` + 1.
    pub reason: u8,
    pub backlog_pkts: u64,
    pub backlog_bytes: u64,
    pub red_avg: f64,
}

/// The columns of the rows not yet written.
#[derive(Default)]
struct Buffer {
    ints: Vec<Vec<i64>>,
    keys: Vec<Vec<i32>>,
    floats: Vec<f64>,
}

/// The event log being written.
pub struct EventLog {
    /// The writer thread's channel, and the thread (until finished).
    batches: Option<SyncSender<RecordBatch>>,
    writer: Option<JoinHandle<Result<(), LogError>>>,
    schema: Arc<Schema>,
    /// Per dictionary column (in [`COLUMNS`] order), its values.
    values: Vec<ArrayRef>,
    buffer: Buffer,
    rows: usize,
    pub written: u64,
}

/// Why the log could not be written.
pub type LogError = String;

impl EventLog {
    /// Creates `path` (an existing file is replaced) with the log's schema;
    /// `metadata` becomes the file's key-value metadata.
    pub fn create(path: &Path, names: &Dictionaries, metadata: &[(&str, &str)]) -> Result<EventLog, LogError> {
        let mut fields = Vec::with_capacity(COLUMNS.len());
        let mut values = Vec::new();
        for (name, kind) in COLUMNS {
            let data_type = match kind {
                Kind::Int => DataType::Int64,
                Kind::Float => DataType::Float64,
                Kind::Names(list) => {
                    values.push(Arc::new(StringArray::from_iter_values(names.list(list))) as ArrayRef);
                    DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8))
                }
            };
            let doc = column_doc("events", name).ok_or_else(|| format!("column {name} is not documented"))?;
            let field_metadata = HashMap::from([
                ("description".to_owned(), doc.description.to_owned()),
                ("unit".to_owned(), doc.unit.to_owned()),
            ]);
            fields.push(Field::new(name, data_type, false).with_metadata(field_metadata));
        }
        let schema = Arc::new(Schema::new(fields));
        let mut properties = WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .set_created_by(format!("phblab {}", env!("CARGO_PKG_VERSION")))
            .set_key_value_metadata(Some(
                metadata.iter().map(|(k, v)| KeyValue::new((*k).to_owned(), (*v).to_owned())).collect(),
            ));
        // Times grow, and consecutive sequence numbers are close: their
        // differences pack into a few bits.
        for column in ["time_ns", "seq", "ack"] {
            properties = properties
                .set_column_dictionary_enabled(ColumnPath::from(column), false)
                .set_column_encoding(ColumnPath::from(column), Encoding::DELTA_BINARY_PACKED);
        }
        let file = File::create(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut writer = ArrowWriter::try_new(BufWriter::new(file), schema.clone(), Some(properties.build()))
            .map_err(|e| format!("{}: {e}", path.display()))?;
        let (batches, received) = sync_channel::<RecordBatch>(BATCHES_IN_FLIGHT);
        let shown = path.display().to_string();
        let writer = std::thread::Builder::new()
            .name("phblab-trace".into())
            .spawn(move || {
                for batch in received {
                    writer.write(&batch).map_err(|e| format!("{shown}: {e}"))?;
                }
                writer.close().map(drop).map_err(|e| format!("{shown}: {e}"))
            })
            .map_err(|e| format!("cannot start the trace's writer thread: {e}"))?;
        let ints = COLUMNS.iter().filter(|(_, k)| matches!(k, Kind::Int)).count();
        let buffer = Buffer {
            ints: vec![Vec::with_capacity(BATCH_ROWS); ints],
            keys: vec![Vec::with_capacity(BATCH_ROWS); values.len()],
            floats: Vec::with_capacity(BATCH_ROWS),
        };
        Ok(EventLog { batches: Some(batches), writer: Some(writer), schema, values, buffer, rows: 0, written: 0 })
    }

    /// Adds a row; writes a batch when one is full.
    pub fn push(&mut self, row: &Row) -> Result<(), LogError> {
        let b = &mut self.buffer;
        let ints = [
            row.time_ns,
            u64::from(row.dscp),
            u64::from(row.ecn),
            row.seq,
            row.ack,
            u64::from(row.size),
            u64::from(row.cells),
            row.backlog_pkts,
            row.backlog_bytes,
        ];
        for (column, value) in b.ints.iter_mut().zip(ints) {
            column.push(value as i64);
        }
        let keys = [
            u32::from(row.event),
            row.scope,
            row.class,
            u32::from(row.colour),
            row.flow,
            u32::from(row.kind),
            u32::from(row.reason),
        ];
        for (column, key) in b.keys.iter_mut().zip(keys) {
            column.push(key as i32);
        }
        b.floats.push(row.red_avg);
        self.rows += 1;
        if self.rows == BATCH_ROWS {
            self.flush()?;
        }
        Ok(())
    }

    /// Writes the buffered rows as one batch.
    fn flush(&mut self) -> Result<(), LogError> {
        if self.rows == 0 {
            return Ok(());
        }
        let b = &mut self.buffer;
        let (mut ints, mut keys, mut values) = (b.ints.iter_mut(), b.keys.iter_mut(), self.values.iter());
        let mut arrays: Vec<ArrayRef> = Vec::with_capacity(COLUMNS.len());
        for (_, kind) in COLUMNS {
            arrays.push(match kind {
                Kind::Int => Arc::new(Int64Array::from(std::mem::take(ints.next().expect("a buffer per column")))),
                Kind::Float => Arc::new(Float64Array::from(std::mem::take(&mut b.floats))),
                Kind::Names(_) => {
                    let keys = Int32Array::from(std::mem::take(keys.next().expect("a buffer per column")));
                    let values = values.next().expect("values per dictionary column").clone();
                    Arc::new(DictionaryArray::<Int32Type>::try_new(keys, values).map_err(|e| e.to_string())?)
                }
            });
        }
        for column in &mut b.ints {
            column.reserve(BATCH_ROWS);
        }
        for column in &mut b.keys {
            column.reserve(BATCH_ROWS);
        }
        b.floats.reserve(BATCH_ROWS);
        let batch = RecordBatch::try_new(self.schema.clone(), arrays).map_err(|e| e.to_string())?;
        let sent = self.batches.as_ref().expect("open until finished").send(batch);
        if sent.is_err() {
            // the writer thread stopped: its error says why
            self.batches = None;
            return self.finish();
        }
        self.written += self.rows as u64;
        self.rows = 0;
        Ok(())
    }

    /// Writes what is left and closes the file.
    pub fn finish(&mut self) -> Result<(), LogError> {
        if self.batches.is_some() {
            self.flush()?;
        }
        self.batches = None;
        match self.writer.take() {
            Some(writer) => writer.join().map_err(|_| "the trace's writer thread panicked".to_owned())?,
            None => Ok(()),
        }
    }
}

impl Dictionaries {
    fn list(&self, names: Names) -> Vec<&str> {
        match names {
            Names::Event => super::TraceEvent::ALL.iter().map(|e| e.name()).collect(),
            Names::Scope => self.scopes.iter().map(String::as_str).collect(),
            Names::Class => self.classes.iter().map(String::as_str).collect(),
            Names::Colour => vec!["green", "yellow", "red"],
            Names::Flow => self.flows.iter().map(String::as_str).collect(),
            Names::PacketKind => vec!["udp", "data", "ack"],
            Names::Reason => std::iter::once("").chain(phb::DropReason::ALL.iter().map(|r| r.name())).collect(),
        }
    }
}
