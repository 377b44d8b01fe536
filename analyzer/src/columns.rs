//! Event records -> Arrow record batches, one table per event type. Generic over the
//! parsed format: knows field kinds and Arrow types, nothing of NVMe or Parquet.

use crate::tracedat::bytes::{until_nul, Endian};
use crate::tracedat::format::{EventFormat, Field, FieldKind};
use arrow_array::builder::BinaryBuilder;
use arrow_array::types::*;
use arrow_array::{ArrayRef, ArrowPrimitiveType, ListArray, PrimitiveArray, RecordBatch};
use arrow_buffer::{OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field as AField, Schema, SchemaRef};
use std::collections::HashMap;
use std::sync::Arc;

/// Names of the columns every event table starts with.
pub const COMMON_COLUMNS: [&str; 4] = ["ts", "cpu", "pid", "comm"];

/// The Parquet column name of an event field: its own name, unless that collides with a
/// common column (block events have their own `comm`), then `field_<name>`.
pub fn column_name(field: &str) -> String {
    if COMMON_COLUMNS.contains(&field) {
        format!("field_{}", field)
    } else {
        field.to_string()
    }
}

/// Fields that become columns: all but common_type (implied by the file) and common_pid
/// (the `pid` column).
pub fn output_fields(f: &EventFormat) -> Vec<Field> {
    f.fields.iter().filter(|x| x.name != "common_type" && x.name != "common_pid").cloned().collect()
}

fn int_type(size: usize, signed: bool) -> DataType {
    match (size, signed) {
        (1, true) => DataType::Int8,
        (2, true) => DataType::Int16,
        (4, true) => DataType::Int32,
        (8, true) => DataType::Int64,
        (1, false) => DataType::UInt8,
        (2, false) => DataType::UInt16,
        (4, false) => DataType::UInt32,
        _ => DataType::UInt64,
    }
}

fn dict_utf8() -> DataType {
    DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8))
}

pub fn arrow_type(kind: &FieldKind) -> DataType {
    match kind {
        FieldKind::Int { size, signed } => int_type(*size, *signed),
        FieldKind::Str { .. } | FieldKind::DynStr { .. } => dict_utf8(),
        FieldKind::Array { elem_size, signed, .. } | FieldKind::DynArray { elem_size, signed, .. } => {
            DataType::List(Arc::new(AField::new("item", int_type(*elem_size, *signed), false)))
        }
        FieldKind::Bytes { .. } => DataType::Binary,
    }
}

pub fn schema_for(f: &EventFormat) -> SchemaRef {
    let mut cols = vec![
        AField::new("ts", DataType::Int64, false),
        AField::new("cpu", DataType::Int32, false),
        AField::new("pid", DataType::Int32, false),
        AField::new("comm", dict_utf8(), true),
    ];
    for x in output_fields(f) {
        cols.push(AField::new(column_name(&x.name), arrow_type(&x.kind), false));
    }
    Arc::new(Schema::new(cols))
}

/// Integer list column kept as offsets + flat values until the batch is cut.
struct ListCol<T: ArrowPrimitiveType> {
    offsets: Vec<i32>,
    values: Vec<T::Native>,
}

impl<T: ArrowPrimitiveType> ListCol<T> {
    fn new() -> Self {
        ListCol { offsets: vec![0], values: Vec::new() }
    }
    fn finish(&mut self, item: &Arc<AField>) -> ArrayRef {
        let offsets = std::mem::replace(&mut self.offsets, vec![0]);
        let values = std::mem::take(&mut self.values);
        let arr = PrimitiveArray::<T>::new(ScalarBuffer::from(values), None);
        Arc::new(ListArray::new(item.clone(), OffsetBuffer::new(ScalarBuffer::from(offsets)), Arc::new(arr), None))
    }
}

enum Col {
    I8(Vec<i8>),
    I16(Vec<i16>),
    I32(Vec<i32>),
    I64(Vec<i64>),
    U8(Vec<u8>),
    U16(Vec<u16>),
    U32(Vec<u32>),
    U64(Vec<u64>),
    LI8(ListCol<Int8Type>),
    LI16(ListCol<Int16Type>),
    LI32(ListCol<Int32Type>),
    LI64(ListCol<Int64Type>),
    LU8(ListCol<UInt8Type>),
    LU16(ListCol<UInt16Type>),
    LU32(ListCol<UInt32Type>),
    LU64(ListCol<UInt64Type>),
    Str(StrColumn),
    Bytes(BinaryBuilder),
}

impl Col {
    fn for_kind(kind: &FieldKind) -> Col {
        match kind {
            FieldKind::Int { size, signed } => match (size, signed) {
                (1, true) => Col::I8(Vec::new()),
                (2, true) => Col::I16(Vec::new()),
                (4, true) => Col::I32(Vec::new()),
                (8, true) => Col::I64(Vec::new()),
                (1, false) => Col::U8(Vec::new()),
                (2, false) => Col::U16(Vec::new()),
                (4, false) => Col::U32(Vec::new()),
                _ => Col::U64(Vec::new()),
            },
            FieldKind::Array { elem_size, signed, .. } | FieldKind::DynArray { elem_size, signed, .. } => {
                match (elem_size, signed) {
                    (1, true) => Col::LI8(ListCol::new()),
                    (2, true) => Col::LI16(ListCol::new()),
                    (4, true) => Col::LI32(ListCol::new()),
                    (8, true) => Col::LI64(ListCol::new()),
                    (1, false) => Col::LU8(ListCol::new()),
                    (2, false) => Col::LU16(ListCol::new()),
                    (4, false) => Col::LU32(ListCol::new()),
                    _ => Col::LU64(ListCol::new()),
                }
            }
            FieldKind::Str { .. } | FieldKind::DynStr { .. } => Col::Str(StrColumn::default()),
            FieldKind::Bytes { .. } => Col::Bytes(BinaryBuilder::new()),
        }
    }
}

/// Rows of one event type being accumulated by one decoding thread.
pub struct EventTable {
    pub format: Arc<EventFormat>,
    pub schema: SchemaRef,
    fields: Vec<Field>,
    cols: Vec<Col>,
    ts: Vec<i64>,
    cpu: Vec<i32>,
    pid: Vec<i32>,
    comm: CommColumn,
    pid_field: Option<Field>,
    min_size: usize,
    endian: Endian,
    pub rows: usize,
    /// Records too short for the format's fixed fields (skipped).
    pub short_records: u64,
    /// Dynamic fields pointing outside their record (written empty).
    pub bad_dynamic: u64,
    /// Strings that were not valid UTF-8 (written with U+FFFD replacements).
    pub invalid_utf8: u64,
}

impl EventTable {
    pub fn new(format: Arc<EventFormat>, schema: SchemaRef, endian: Endian) -> EventTable {
        let fields = output_fields(&format);
        let cols = fields.iter().map(|f| Col::for_kind(&f.kind)).collect();
        EventTable {
            pid_field: format.field("common_pid").cloned(),
            min_size: format.min_size(),
            schema,
            fields,
            cols,
            ts: Vec::new(),
            cpu: Vec::new(),
            pid: Vec::new(),
            comm: CommColumn::default(),
            endian,
            rows: 0,
            short_records: 0,
            bad_dynamic: 0,
            invalid_utf8: 0,
            format,
        }
    }

    /// Appends one record. `comms` maps a pid to its saved command line.
    #[inline]
    pub fn push(&mut self, ts: i64, cpu: i32, data: &[u8], comms: &HashMap<i32, Arc<str>>) {
        if data.len() < self.min_size {
            self.short_records += 1;
            return;
        }
        let e = self.endian;
        let pid = match &self.pid_field {
            Some(f) => e.read_uint(data, f.offset, f.size) as u32 as i32,
            None => -1,
        };
        self.ts.push(ts);
        self.cpu.push(cpu);
        self.pid.push(pid);
        self.comm.push(pid, comms);
        for (f, col) in self.fields.iter().zip(self.cols.iter_mut()) {
            let off = f.offset;
            macro_rules! scalar {
                ($v:expr, $t:ty) => {
                    $v.push(e.read_uint(data, off, std::mem::size_of::<$t>()) as $t)
                };
            }
            match col {
                Col::I8(v) => scalar!(v, i8),
                Col::I16(v) => scalar!(v, i16),
                Col::I32(v) => scalar!(v, i32),
                Col::I64(v) => scalar!(v, i64),
                Col::U8(v) => scalar!(v, u8),
                Col::U16(v) => scalar!(v, u16),
                Col::U32(v) => scalar!(v, u32),
                Col::U64(v) => scalar!(v, u64),
                Col::Str(b) => {
                    let raw = match f.kind {
                        FieldKind::DynStr { relative } => match dyn_slice(data, f, relative, e) {
                            Some(s) => s,
                            None => {
                                self.bad_dynamic += 1;
                                &[]
                            }
                        },
                        _ => &data[off..off + f.size],
                    };
                    if !b.push(until_nul(raw)) {
                        self.invalid_utf8 += 1;
                    }
                }
                Col::Bytes(b) => b.append_value(&data[off..off + f.size]),
                _ => {
                    let (raw, es) = match f.kind {
                        FieldKind::Array { elem_size, .. } => (&data[off..off + f.size], elem_size),
                        FieldKind::DynArray { elem_size, relative, .. } => match dyn_slice(data, f, relative, e) {
                            Some(s) => (s, elem_size),
                            None => {
                                self.bad_dynamic += 1;
                                (&data[0..0], elem_size)
                            }
                        },
                        _ => unreachable!("list column for a non-array field"),
                    };
                    macro_rules! list {
                        ($l:expr, $t:ty) => {{
                            for ch in raw.chunks_exact(es) {
                                $l.values.push(e.read_uint(ch, 0, es) as $t);
                            }
                            $l.offsets.push($l.values.len() as i32);
                        }};
                    }
                    match col {
                        Col::LI8(l) => list!(l, i8),
                        Col::LI16(l) => list!(l, i16),
                        Col::LI32(l) => list!(l, i32),
                        Col::LI64(l) => list!(l, i64),
                        Col::LU8(l) => list!(l, u8),
                        Col::LU16(l) => list!(l, u16),
                        Col::LU32(l) => list!(l, u32),
                        Col::LU64(l) => list!(l, u64),
                        _ => unreachable!(),
                    }
                }
            }
        }
        self.rows += 1;
    }

    /// Cuts the accumulated rows into a record batch and starts over.
    pub fn take_batch(&mut self) -> RecordBatch {
        let mut arrays: Vec<ArrayRef> = vec![
            Arc::new(PrimitiveArray::<Int64Type>::from(std::mem::take(&mut self.ts))),
            Arc::new(PrimitiveArray::<Int32Type>::from(std::mem::take(&mut self.cpu))),
            Arc::new(PrimitiveArray::<Int32Type>::from(std::mem::take(&mut self.pid))),
            self.comm.finish(),
        ];
        for (i, col) in self.cols.iter_mut().enumerate() {
            let item = match self.schema.field(4 + i).data_type() {
                DataType::List(item) => Some(item.clone()),
                _ => None,
            };
            macro_rules! prim {
                ($v:expr, $t:ty) => {
                    Arc::new(PrimitiveArray::<$t>::from(std::mem::take($v))) as ArrayRef
                };
            }
            let a: ArrayRef = match col {
                Col::I8(v) => prim!(v, Int8Type),
                Col::I16(v) => prim!(v, Int16Type),
                Col::I32(v) => prim!(v, Int32Type),
                Col::I64(v) => prim!(v, Int64Type),
                Col::U8(v) => prim!(v, UInt8Type),
                Col::U16(v) => prim!(v, UInt16Type),
                Col::U32(v) => prim!(v, UInt32Type),
                Col::U64(v) => prim!(v, UInt64Type),
                Col::LI8(l) => l.finish(item.as_ref().unwrap()),
                Col::LI16(l) => l.finish(item.as_ref().unwrap()),
                Col::LI32(l) => l.finish(item.as_ref().unwrap()),
                Col::LI64(l) => l.finish(item.as_ref().unwrap()),
                Col::LU8(l) => l.finish(item.as_ref().unwrap()),
                Col::LU16(l) => l.finish(item.as_ref().unwrap()),
                Col::LU32(l) => l.finish(item.as_ref().unwrap()),
                Col::LU64(l) => l.finish(item.as_ref().unwrap()),
                Col::Str(b) => b.finish(),
                Col::Bytes(b) => Arc::new(b.finish()),
            };
            arrays.push(a);
        }
        self.rows = 0;
        RecordBatch::try_new(self.schema.clone(), arrays).expect("columns match the schema")
    }
}

/// The bytes of a `__data_loc` / `__rel_loc` field, or None when they fall outside the record.
#[inline]
fn dyn_slice<'a>(data: &'a [u8], f: &Field, relative: bool, e: Endian) -> Option<&'a [u8]> {
    let v = e.read_uint(data, f.offset, 4.min(f.size)) as u32;
    let mut start = (v & 0xffff) as usize;
    let len = (v >> 16) as usize;
    if relative {
        start += f.offset + f.size;
    }
    data.get(start..start + len)
}

/// `comm` as a dictionary column keyed by pid: a pid's name is looked up once per batch,
/// not hashed as a string for every row. Only trace-cmd's saved cmdlines name a pid
/// (pid 0, the idle task, is never there); unknown pids are null.
#[derive(Default)]
struct CommColumn {
    keys: Vec<i32>,
    values: Vec<Arc<str>>,
    key_of_pid: HashMap<i32, i32>,
    last: Option<(i32, i32)>,
}

impl CommColumn {
    #[inline]
    fn push(&mut self, pid: i32, comms: &HashMap<i32, Arc<str>>) {
        let key = match self.last {
            Some((p, k)) if p == pid => k,
            _ => {
                let k = match self.key_of_pid.get(&pid) {
                    Some(k) => *k,
                    None => {
                        let k = match comms.get(&pid) {
                            Some(c) => {
                                self.values.push(c.clone());
                                self.values.len() as i32 - 1
                            }
                            None => -1,
                        };
                        self.key_of_pid.insert(pid, k);
                        k
                    }
                };
                self.last = Some((pid, k));
                k
            }
        };
        self.keys.push(key);
    }

    fn finish(&mut self) -> ArrayRef {
        let keys = std::mem::take(&mut self.keys);
        let nulls = arrow_buffer::NullBuffer::from(keys.iter().map(|k| *k >= 0).collect::<Vec<bool>>());
        let keys = PrimitiveArray::<Int32Type>::new(ScalarBuffer::from(keys.into_iter().map(|k| k.max(0)).collect::<Vec<i32>>()), Some(nulls));
        let values = arrow_array::StringArray::from_iter_values(self.values.iter().map(|v| v.as_ref()));
        self.values.clear();
        self.key_of_pid.clear();
        self.last = None;
        Arc::new(arrow_array::DictionaryArray::<Int32Type>::try_new(keys, Arc::new(values)).expect("keys index values"))
    }
}

/// A string field as a dictionary column. Trace strings repeat (disk names, rwbs, task
/// names), so the previous row's value is checked first and only new values are hashed.
#[derive(Default)]
struct StrColumn {
    keys: Vec<i32>,
    values: Vec<String>,
    key_of: HashMap<Box<[u8]>, i32>,
    last: Option<(Box<[u8]>, i32)>,
}

impl StrColumn {
    /// Appends raw text; returns false when it was not valid UTF-8 (stored with U+FFFD).
    #[inline]
    fn push(&mut self, raw: &[u8]) -> bool {
        if let Some((b, k)) = &self.last {
            if b.as_ref() == raw {
                self.keys.push(*k);
                return true;
            }
        }
        let mut valid = true;
        let k = match self.key_of.get(raw) {
            Some(k) => *k,
            None => {
                let text = match std::str::from_utf8(raw) {
                    Ok(t) => t.to_string(),
                    Err(_) => {
                        valid = false;
                        String::from_utf8_lossy(raw).into_owned()
                    }
                };
                self.values.push(text);
                let k = self.values.len() as i32 - 1;
                self.key_of.insert(raw.into(), k);
                k
            }
        };
        self.keys.push(k);
        self.last = Some((raw.into(), k));
        valid
    }

    fn finish(&mut self) -> ArrayRef {
        let keys = PrimitiveArray::<Int32Type>::from(std::mem::take(&mut self.keys));
        let values = arrow_array::StringArray::from_iter_values(self.values.drain(..));
        self.key_of.clear();
        self.last = None;
        Arc::new(arrow_array::DictionaryArray::<Int32Type>::try_new(keys, Arc::new(values)).expect("keys index values"))
    }
}
