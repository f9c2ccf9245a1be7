//! A result [`Table`] as a Parquet file (in memory), written by the arrow
//! and parquet crates: one row group, snappy compression (pyarrow's
//! default), integer columns as int64 (pandas' default integer), and each
//! column's description and unit ([`super::columns`]) in its Arrow field
//! metadata, which pyarrow and pandas read back
//! (`pq.read_schema(path).field("loss_rate").metadata`).
//!
//! Written by the core so that `phblab run` needs neither pandas nor
//! pyarrow. The bytes depend only on the table and phblab's version, so the
//! same run gives the same file.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::{ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;

use super::columns::column_doc;
use super::{Column, Table};

/// Why a table could not be written (a bug: tables are built by phblab).
#[derive(Debug, thiserror::Error)]
pub enum ParquetError {
    #[error("column {column} of table {table}: {message}")]
    Column { table: String, column: String, message: String },
    #[error("table {table}: {source}")]
    Write { table: String, source: parquet::errors::ParquetError },
    #[error("table {table}: {source}")]
    Arrow { table: String, source: arrow_schema::ArrowError },
}

/// The Parquet file of `table`; `metadata` becomes the file's key-value
/// metadata (e.g. `phblab_version`).
pub fn to_parquet(table: &Table, metadata: &[(&str, &str)]) -> Result<Vec<u8>, ParquetError> {
    let mut fields = Vec::with_capacity(table.columns.len());
    let mut arrays: Vec<ArrayRef> = Vec::with_capacity(table.columns.len());
    for (name, column) in &table.columns {
        let (data_type, array): (DataType, ArrayRef) = match column {
            Column::F64(v) => (DataType::Float64, Arc::new(Float64Array::from(v.clone()))),
            Column::U64(v) => {
                let signed = v
                    .iter()
                    .map(|&x| i64::try_from(x))
                    .collect::<Result<Vec<i64>, _>>()
                    .map_err(|_| column_error(table, name, "a count above 2^63 - 1"))?;
                (DataType::Int64, Arc::new(Int64Array::from(signed)))
            }
            Column::Str(v) => (DataType::Utf8, Arc::new(StringArray::from_iter_values(v))),
        };
        let doc = column_doc(&table.name, name).ok_or_else(|| column_error(table, name, "not documented"))?;
        let field_metadata = HashMap::from([
            ("description".to_owned(), doc.description.to_owned()),
            ("unit".to_owned(), doc.unit.to_owned()),
        ]);
        fields.push(Field::new(name, data_type, false).with_metadata(field_metadata));
        arrays.push(array);
    }
    let schema = Arc::new(Schema::new(fields));
    let arrow = |source| ParquetError::Arrow { table: table.name.clone(), source };
    let write = |source| ParquetError::Write { table: table.name.clone(), source };
    let batch = if arrays.is_empty() {
        RecordBatch::new_empty(schema.clone())
    } else {
        RecordBatch::try_new(schema.clone(), arrays).map_err(arrow)?
    };
    let properties = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_created_by(format!("phblab {}", env!("CARGO_PKG_VERSION")))
        .set_key_value_metadata(Some(
            metadata.iter().map(|(k, v)| KeyValue::new((*k).to_owned(), (*v).to_owned())).collect(),
        ))
        .build();
    let mut bytes = Vec::new();
    let mut writer = ArrowWriter::try_new(&mut bytes, schema, Some(properties)).map_err(write)?;
    writer.write(&batch).map_err(write)?;
    writer.close().map_err(write)?;
    Ok(bytes)
}

fn column_error(table: &Table, column: &str, message: &str) -> ParquetError {
    ParquetError::Column { table: table.name.clone(), column: column.to_owned(), message: message.to_owned() }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn classes() -> Table {
        let mut t = Table::new("classes");
        t.push("scope", Column::Str(vec!["end-to-end".into(), "r1->r2".into()]));
        t.push("arrivals", Column::U64(vec![10, 7]));
        t.push("loss_rate", Column::F64(vec![0.5, f64::NAN]));
        t
    }

    #[test]
    fn a_table_is_a_parquet_file_and_the_same_table_the_same_bytes() {
        let a = to_parquet(&classes(), &[("phblab_version", "x")]).unwrap();
        assert_eq!(&a[..4], b"PAR1");
        assert_eq!(&a[a.len() - 4..], b"PAR1");
        assert_eq!(a, to_parquet(&classes(), &[("phblab_version", "x")]).unwrap());
        // the field metadata travels in the serialised Arrow schema
        let text = String::from_utf8_lossy(&a);
        assert!(text.contains("ARROW:schema"));
    }

    #[test]
    fn an_undocumented_column_is_refused() {
        let mut t = classes();
        t.push("mystery", Column::U64(vec![1, 2]));
        let err = to_parquet(&t, &[]).unwrap_err();
        assert!(err.to_string().contains("column mystery of table classes: not documented"), "{err}");
    }

    #[test]
    fn an_empty_table_keeps_its_schema() {
        let mut t = Table::new("transfers");
        t.push("flow", Column::Str(vec![]));
        t.push("size_bytes", Column::U64(vec![]));
        let bytes = to_parquet(&t, &[]).unwrap();
        assert_eq!(&bytes[..4], b"PAR1");
    }
}
