//! Event records -> Arrow record batches, one table per event type. Generic over the
//! parsed format: knows field kinds and Arrow types, nothing of NVMe or Parquet.
//!
//! Records are extracted a column at a time: the decoder *stages* each record of a block
//! of pages (timestamp and where its bytes are), then `extract` runs one tight loop per
//! field over all staged records of the type. The choice of loop is made once per field
//! per block, not once per field per record.

use crate::ftrace_text::{parse_format, render_bprint, without_newline, MessageKind, Piece, TextContext};
use crate::tracedat::bytes::{until_nul, Endian};
use crate::tracedat::format::{EventFormat, Field, FieldKind};
use crate::tracedat::symbols::TraceSymbols;
use arrow_array::builder::BinaryBuilder;
use arrow_array::types::*;
use arrow_array::{ArrayRef, ArrowPrimitiveType, ListArray, PrimitiveArray, RecordBatch};
use arrow_buffer::{OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field as AField, Schema, SchemaRef};
use std::collections::HashMap;
use std::sync::Arc;

/// Names of the columns every event table starts with.
pub const COMMON_COLUMNS: [&str; 4] = ["ts", "cpu", "pid", "comm"];

/// The column of ftrace's message events (print, bprint, bputs) that holds their text as
/// `trace-cmd report` prints it (`ftrace_text`).
pub const TEXT_COLUMN: &str = "text";

/// The Parquet column name of an event field, before duplicates are resolved
/// (`column_names`): its own name, unless that collides with a common column (block
/// events have their own `comm`), then `field_<name>`.
pub fn column_name(field: &str) -> String {
    if COMMON_COLUMNS.contains(&field) {
        format!("field_{}", field)
    } else {
        field.to_string()
    }
}

/// The column of each name in `names` (the event's fields in format order, then its
/// derived columns): `column_name`, except that a name an earlier one already took gets
/// `<name>_2`, `<name>_3` ..., the first that is neither taken nor the name of any other
/// column (`regmap:regcache_sync` has `__data_loc char[] type` and `int type`: columns
/// `type` and `type_2`). Deterministic: it depends on the names and their order only.
pub fn column_names(names: &[String]) -> Vec<String> {
    let wanted: Vec<String> = names.iter().map(|n| column_name(n)).collect();
    let mut reserved: std::collections::HashSet<&str> = wanted.iter().map(String::as_str).collect();
    reserved.extend(COMMON_COLUMNS);
    let mut taken: std::collections::HashSet<String> = COMMON_COLUMNS.iter().map(|c| c.to_string()).collect();
    let mut out = Vec::with_capacity(names.len());
    for w in &wanted {
        let name = if taken.contains(w) {
            (2..).map(|k| format!("{}_{}", w, k)).find(|c| !taken.contains(c) && !reserved.contains(c.as_str())).expect("some suffix is free")
        } else {
            w.clone()
        };
        taken.insert(name.clone());
        out.push(name);
    }
    out
}

/// Fields that become columns: all but common_type (implied by the file) and common_pid
/// (the `pid` column).
pub fn output_fields(f: &EventFormat) -> Vec<Field> {
    f.fields.iter().filter(|x| x.name != "common_type" && x.name != "common_pid").cloned().collect()
}

/// Where the text of an ftrace message event comes from: the fields it is made of, as
/// positions in `output_fields`.
#[derive(Clone, Copy, Debug)]
pub enum MessageSpec {
    /// `buf`: the written text.
    Print { buf: usize },
    /// `fmt` (the format's address) and `buf` (the packed arguments).
    Bprint { fmt: usize, buf: usize },
    /// `str`: the string's address.
    Bputs { str: usize },
}

/// The message spec of an event type, when it is one of ftrace's message events and has
/// the fields its text is made of.
pub fn message_spec(f: &EventFormat) -> Option<MessageSpec> {
    let fields = output_fields(f);
    let at = |name: &str, ok: fn(&FieldKind) -> bool| fields.iter().position(|x| x.name == name && ok(&x.kind));
    let int = |k: &FieldKind| matches!(k, FieldKind::Int { .. });
    match MessageKind::of(&f.system, &f.name)? {
        MessageKind::Print => Some(MessageSpec::Print { buf: at("buf", |k| matches!(k, FieldKind::RestStr | FieldKind::Str { .. }))? }),
        MessageKind::Bprint => Some(MessageSpec::Bprint { fmt: at("fmt", int)?, buf: at("buf", |k| matches!(k, FieldKind::RestBytes))? }),
        MessageKind::Bputs => Some(MessageSpec::Bputs { str: at("str", int)? }),
    }
}

/// The names of an event type's columns after the four common ones, in order: its
/// fields', then `text` for a message event (`column_names`).
pub fn event_column_names(f: &EventFormat) -> Vec<String> {
    let mut names: Vec<String> = output_fields(f).into_iter().map(|x| x.name).collect();
    if message_spec(f).is_some() {
        names.push(TEXT_COLUMN.to_string());
    }
    column_names(&names)
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
        FieldKind::Str { .. } | FieldKind::DynStr { .. } | FieldKind::RestStr => dict_utf8(),
        FieldKind::Array { elem_size, signed, .. } | FieldKind::DynArray { elem_size, signed, .. } | FieldKind::RestArray { elem_size, signed } => {
            DataType::List(Arc::new(AField::new("item", int_type(*elem_size, *signed), false)))
        }
        FieldKind::Bytes { .. } | FieldKind::RestBytes => DataType::Binary,
    }
}

pub fn schema_for(f: &EventFormat) -> SchemaRef {
    let mut cols = vec![
        AField::new("ts", DataType::Int64, false),
        AField::new("cpu", DataType::Int32, false),
        AField::new("pid", DataType::Int32, false),
        AField::new("comm", dict_utf8(), true),
    ];
    let names = event_column_names(f);
    let fields = output_fields(f);
    for (x, name) in fields.iter().zip(&names) {
        cols.push(AField::new(name.as_str(), arrow_type(&x.kind), false));
    }
    if names.len() > fields.len() {
        // The message text: null when the file lacks the format or string it points at.
        cols.push(AField::new(names[fields.len()].as_str(), dict_utf8(), true));
    }
    Arc::new(Schema::new(cols))
}

/// A fixed-size integer as stored in a record.
trait Prim: Copy {
    const SIZE: usize;
    fn read(b: &[u8], e: Endian) -> Self;
}

macro_rules! prim {
    ($($t:ty),*) => {$(
        impl Prim for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            #[inline(always)]
            fn read(b: &[u8], e: Endian) -> $t {
                let a: [u8; std::mem::size_of::<$t>()] = b[..std::mem::size_of::<$t>()].try_into().unwrap();
                match e {
                    Endian::Little => <$t>::from_le_bytes(a),
                    Endian::Big => <$t>::from_be_bytes(a),
                }
            }
        }
    )*};
}
prim!(i8, i16, i32, i64, u8, u16, u32, u64);

/// One record waiting for extraction: its timestamp and where it is in the block.
#[derive(Clone, Copy, Debug)]
struct Staged {
    ts: i64,
    start: u32,
    len: u32,
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

impl<T: ArrowPrimitiveType> ListCol<T>
where
    T::Native: Prim,
{
    /// Appends one list per record from `raw(record)`, a whole number of elements.
    #[inline(always)]
    fn push_elems(&mut self, raw: &[u8], e: Endian) {
        let es = <T::Native as Prim>::SIZE;
        self.values.reserve(raw.len() / es);
        for ch in raw.chunks_exact(es) {
            self.values.push(<T::Native as Prim>::read(ch, e));
        }
        self.offsets.push(self.values.len() as i32);
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
            FieldKind::Array { elem_size, signed, .. } | FieldKind::DynArray { elem_size, signed, .. } | FieldKind::RestArray { elem_size, signed } => {
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
            FieldKind::Str { .. } | FieldKind::DynStr { .. } | FieldKind::RestStr => Col::Str(StrColumn::default()),
            FieldKind::Bytes { .. } | FieldKind::RestBytes => Col::Bytes(BinaryBuilder::new()),
        }
    }
}

/// Problems found while extracting records (each is counted, never fatal).
#[derive(Clone, Copy, Debug, Default)]
pub struct ExtractCounts {
    /// Records too short for the format's fixed fields (skipped).
    pub short_records: u64,
    /// Dynamic fields pointing outside their record (written empty).
    pub bad_dynamic: u64,
    /// String values that were not valid UTF-8 (written with U+FFFD replacements).
    pub invalid_utf8: u64,
    /// bprint / bputs records whose format or string address is not in the file's printk
    /// formats (their text is null; the raw fields are kept).
    pub printk_missing: u64,
}

/// Rows of one event type being accumulated by one decoding thread.
pub struct EventTable {
    pub schema: SchemaRef,
    fields: Vec<Field>,
    cols: Vec<Col>,
    ts: Vec<i64>,
    cpu: Vec<i32>,
    pid: Vec<i32>,
    comm: CommColumn,
    /// (offset, size) of common_pid.
    pid_at: Option<(usize, usize)>,
    min_size: usize,
    endian: Endian,
    staged: Vec<Staged>,
    pub rows: usize,
    /// Rows at which the caller cuts a batch (it cuts after a whole block, so a batch may
    /// hold up to a block's rows more).
    batch_rows: usize,
    /// The most rows one block has added.
    block_rows_max: usize,
    /// The `text` column of ftrace's message events.
    message: Option<MessageCol>,
    pub counts: ExtractCounts,
}

impl EventTable {
    /// A table for `format`'s records; `symbols` and `long_size` (the kernel's long) are
    /// what the text of ftrace's message events is made with.
    pub fn new(format: &EventFormat, schema: SchemaRef, endian: Endian, batch_rows: usize, symbols: &Arc<TraceSymbols>, long_size: usize) -> EventTable {
        let fields = output_fields(format);
        let cols = fields.iter().map(|f| Col::for_kind(&f.kind)).collect();
        let message = message_spec(format).map(|spec| MessageCol { spec, text: StrColumn::default(), symbols: symbols.clone(), long_size, formats: HashMap::new(), scratch: Vec::new() });
        EventTable {
            message,
            pid_at: format.field("common_pid").map(|f| (f.offset, f.size)),
            min_size: format.min_size(),
            schema,
            fields,
            cols,
            ts: Vec::new(),
            cpu: Vec::new(),
            pid: Vec::new(),
            comm: CommColumn::default(),
            endian,
            staged: Vec::new(),
            rows: 0,
            batch_rows,
            block_rows_max: 0,
            counts: ExtractCounts::default(),
        }
    }

    /// Queues the record `block[start..start + len]` for the next `extract` over the
    /// same block. Returns false (and counts it) when the record is too short.
    #[inline]
    pub fn stage(&mut self, ts: i64, start: usize, len: usize) -> bool {
        if len < self.min_size {
            self.counts.short_records += 1;
            return false;
        }
        self.staged.push(Staged { ts, start: start as u32, len: len as u32 });
        true
    }

    /// Rows staged and not yet extracted.
    pub fn staged(&self) -> usize {
        self.staged.len()
    }

    /// Forgets staged records (their block was abandoned after an error).
    pub fn discard_staged(&mut self) {
        self.staged.clear();
    }

    /// Appends every staged record of `block` as a row, a column at a time.
    /// `comms` maps a pid to its saved command line.
    pub fn extract(&mut self, block: &[u8], cpu: i32, comms: &HashMap<i32, Arc<str>>) {
        let staged = std::mem::take(&mut self.staged);
        let n = staged.len();
        let e = self.endian;
        self.block_rows_max = self.block_rows_max.max(n);
        if self.rows + n > self.ts.capacity() {
            self.reserve_rows((self.rows + n).max(self.batch_capacity()));
        }
        self.ts.extend(staged.iter().map(|s| s.ts));
        self.cpu.resize(self.cpu.len() + n, cpu);
        let first_pid = self.pid.len();
        match self.pid_at {
            Some((off, 4)) => self.pid.extend(staged.iter().map(|s| i32::read(&block[s.start as usize + off..], e))),
            Some((off, size)) => self.pid.extend(staged.iter().map(|s| e.read_uint(block, s.start as usize + off, size) as u32 as i32)),
            None => self.pid.resize(first_pid + n, -1),
        }
        self.comm.extend(&self.pid[first_pid..], comms);
        for (f, col) in self.fields.iter().zip(self.cols.iter_mut()) {
            extract_column(f, col, block, &staged, e, &mut self.counts);
        }
        if let Some(m) = &mut self.message {
            m.extract(&self.fields, block, &staged, e, &mut self.counts);
        }
        self.rows += n;
        // Keep the staging buffer's capacity for the next block.
        self.staged = staged;
        self.staged.clear();
    }

    /// Rows a batch can reach: the cut comes after the block that crosses `batch_rows`.
    /// Columns are sized for that at once: growing by doubling copies every column and
    /// touches fresh pages at each step (a tenth of the converter's CPU on a real capture).
    fn batch_capacity(&self) -> usize {
        self.batch_rows + 2 * self.block_rows_max
    }

    /// Cuts the accumulated rows into a record batch and starts over. A table that
    /// filled a batch will likely fill the next: its columns are sized for it at once.
    pub fn take_batch(&mut self) -> RecordBatch {
        let refill = self.rows >= self.batch_rows;
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
        if let Some(m) = &mut self.message {
            arrays.push(m.text.finish());
        }
        self.rows = 0;
        if refill {
            self.reserve_rows(self.batch_capacity());
        }
        RecordBatch::try_new(self.schema.clone(), arrays).expect("columns match the schema")
    }

    /// Room for `rows` rows in every fixed-width column (list values grow on their own).
    fn reserve_rows(&mut self, rows: usize) {
        fn to<T>(v: &mut Vec<T>, rows: usize) {
            v.reserve_exact(rows.saturating_sub(v.len()));
        }
        to(&mut self.ts, rows);
        to(&mut self.cpu, rows);
        to(&mut self.pid, rows);
        to(&mut self.comm.keys, rows);
        for col in &mut self.cols {
            match col {
                Col::I8(v) => to(v, rows),
                Col::I16(v) => to(v, rows),
                Col::I32(v) => to(v, rows),
                Col::I64(v) => to(v, rows),
                Col::U8(v) => to(v, rows),
                Col::U16(v) => to(v, rows),
                Col::U32(v) => to(v, rows),
                Col::U64(v) => to(v, rows),
                Col::Str(b) => to(&mut b.keys, rows),
                _ => {}
            }
        }
        if let Some(m) = &mut self.message {
            to(&mut m.text.keys, rows);
        }
    }
}

/// The `text` column of an ftrace message event (`ftrace_text`), made from each record's
/// raw fields.
struct MessageCol {
    spec: MessageSpec,
    text: StrColumn,
    symbols: Arc<TraceSymbols>,
    long_size: usize,
    /// bprint formats parsed once per address (None: the file does not have it).
    formats: HashMap<u64, Option<Vec<Piece>>>,
    scratch: Vec<u8>,
}

impl MessageCol {
    fn extract(&mut self, fields: &[Field], block: &[u8], staged: &[Staged], e: Endian, counts: &mut ExtractCounts) {
        let printk = &self.symbols.printk;
        let address = |rec: &[u8], f: &Field| e.read_uint(rec, f.offset, f.size);
        self.text.keys.reserve(staged.len());
        for s in staged {
            let rec = record(block, s);
            let valid = match self.spec {
                MessageSpec::Print { buf } => {
                    let f = &fields[buf];
                    let end = if f.size == 0 { rec.len() } else { f.offset + f.size };
                    self.text.push(without_newline(until_nul(&rec[f.offset..end])))
                }
                MessageSpec::Bputs { str } => match printk.get(address(rec, &fields[str])) {
                    Some(p) => self.text.push(without_newline(p.registered().as_bytes())),
                    None => {
                        counts.printk_missing += 1;
                        self.text.push_null();
                        true
                    }
                },
                MessageSpec::Bprint { fmt, buf } => {
                    let addr = address(rec, &fields[fmt]);
                    let pieces = self.formats.entry(addr).or_insert_with(|| printk.get(addr).map(|p| parse_format(p.registered())));
                    match pieces {
                        Some(pieces) => {
                            let ctx = TextContext { endian: e, long_size: self.long_size, symbols: &self.symbols };
                            self.scratch.clear();
                            render_bprint(pieces, &rec[fields[buf].offset..], &ctx, &mut self.scratch);
                            self.text.push(without_newline(&self.scratch))
                        }
                        None => {
                            counts.printk_missing += 1;
                            self.text.push_null();
                            true
                        }
                    }
                }
            };
            if !valid {
                counts.invalid_utf8 += 1;
            }
        }
    }
}

/// Fixed-size integers: one load per record.
#[inline]
fn ints<T: Prim>(v: &mut Vec<T>, block: &[u8], staged: &[Staged], off: usize, e: Endian) {
    v.reserve(staged.len());
    match e {
        Endian::Little => v.extend(staged.iter().map(|s| T::read(&block[s.start as usize + off..], Endian::Little))),
        Endian::Big => v.extend(staged.iter().map(|s| T::read(&block[s.start as usize + off..], Endian::Big))),
    }
}

#[inline]
fn record<'a>(block: &'a [u8], s: &Staged) -> &'a [u8] {
    &block[s.start as usize..s.start as usize + s.len as usize]
}

/// Fills one column from every staged record.
fn extract_column(f: &Field, col: &mut Col, block: &[u8], staged: &[Staged], e: Endian, counts: &mut ExtractCounts) {
    let off = f.offset;
    // The bytes of an array field in one record (dynamic ones may point outside it; a
    // field of size 0 runs to the record's end, whole elements of it).
    let array_bytes = |s: &Staged, counts: &mut ExtractCounts| -> &[u8] {
        match f.kind {
            FieldKind::DynArray { relative, .. } => dyn_slice(record(block, s), f, relative, e).unwrap_or_else(|| {
                counts.bad_dynamic += 1;
                &[]
            }),
            FieldKind::RestArray { elem_size, .. } => {
                let rest = &record(block, s)[off..];
                &rest[..rest.len() / elem_size * elem_size]
            }
            _ => &block[s.start as usize + off..s.start as usize + off + f.size],
        }
    };
    macro_rules! list {
        ($l:expr) => {
            for s in staged {
                let raw = array_bytes(s, counts);
                $l.push_elems(raw, e);
            }
        };
    }
    match col {
        Col::I8(v) => ints(v, block, staged, off, e),
        Col::I16(v) => ints(v, block, staged, off, e),
        Col::I32(v) => ints(v, block, staged, off, e),
        Col::I64(v) => ints(v, block, staged, off, e),
        Col::U8(v) => ints(v, block, staged, off, e),
        Col::U16(v) => ints(v, block, staged, off, e),
        Col::U32(v) => ints(v, block, staged, off, e),
        Col::U64(v) => ints(v, block, staged, off, e),
        Col::LI8(l) => list!(l),
        Col::LI16(l) => list!(l),
        Col::LI32(l) => list!(l),
        Col::LI64(l) => list!(l),
        Col::LU8(l) => list!(l),
        Col::LU16(l) => list!(l),
        Col::LU32(l) => list!(l),
        Col::LU64(l) => list!(l),
        Col::Str(b) => {
            b.keys.reserve(staged.len());
            match f.kind {
                FieldKind::DynStr { relative } => {
                    for s in staged {
                        let raw = dyn_slice(record(block, s), f, relative, e).unwrap_or_else(|| {
                            counts.bad_dynamic += 1;
                            &[]
                        });
                        if !b.push(until_nul(raw)) {
                            counts.invalid_utf8 += 1;
                        }
                    }
                }
                FieldKind::RestStr => {
                    for s in staged {
                        if !b.push(until_nul(&record(block, s)[off..])) {
                            counts.invalid_utf8 += 1;
                        }
                    }
                }
                _ => {
                    for s in staged {
                        let field = &block[s.start as usize + off..s.start as usize + off + f.size];
                        // Same field bytes as the previous row: same string, no scan, no hash.
                        if let Some(k) = b.last_field_key {
                            if same_bytes(&b.last_field, field) {
                                b.keys.push(k);
                                if !b.valid[k as usize] {
                                    counts.invalid_utf8 += 1;
                                }
                                continue;
                            }
                        }
                        if !b.push(until_nul(field)) {
                            counts.invalid_utf8 += 1;
                        }
                        b.last_field.clear();
                        b.last_field.extend_from_slice(field);
                        b.last_field_key = b.last_key;
                    }
                }
            }
        }
        Col::Bytes(b) => match f.kind {
            FieldKind::RestBytes => {
                for s in staged {
                    b.append_value(&record(block, s)[off..]);
                }
            }
            _ => {
                for s in staged {
                    b.append_value(&block[s.start as usize + off..s.start as usize + off + f.size]);
                }
            }
        },
    }
}

/// Equality of two short byte strings, eight bytes at a time and inline (a libc
/// memcmp call costs more than the comparison for the 8-32 byte fields of trace events).
#[inline(always)]
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let (ac, bc) = (a.chunks_exact(8), b.chunks_exact(8));
    let tails_equal = ac.remainder().iter().zip(bc.remainder()).all(|(x, y)| x == y);
    tails_equal && ac.zip(bc).all(|(x, y)| u64::from_ne_bytes(x.try_into().unwrap()) == u64::from_ne_bytes(y.try_into().unwrap()))
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

/// Dictionary keys with -1 for a null: the nulls in a validity buffer, and their key slot
/// set to 0 (it must still index a value).
fn dictionary_keys(mut keys: Vec<i32>) -> PrimitiveArray<Int32Type> {
    let nulls = if keys.iter().any(|k| *k < 0) {
        let valid = arrow_buffer::BooleanBuffer::collect_bool(keys.len(), |i| keys[i] >= 0);
        keys.iter_mut().for_each(|k| *k = (*k).max(0));
        Some(arrow_buffer::NullBuffer::new(valid))
    } else {
        None
    };
    PrimitiveArray::<Int32Type>::new(ScalarBuffer::from(keys), nulls)
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
    fn extend(&mut self, pids: &[i32], comms: &HashMap<i32, Arc<str>>) {
        self.keys.reserve(pids.len());
        for &pid in pids {
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
    }

    fn finish(&mut self) -> ArrayRef {
        // Unknown pids (key -1) are nulls.
        let keys = dictionary_keys(std::mem::take(&mut self.keys));
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
    /// Per row its value's index; -1 for a null (only the message text has nulls).
    keys: Vec<i32>,
    values: Vec<String>,
    /// Per value: its bytes were valid UTF-8 (every row of an invalid one is counted).
    valid: Vec<bool>,
    has_nulls: bool,
    key_of: HashMap<Box<[u8]>, i32>,
    /// The previous row's text bytes and key (the buffer is reused).
    last_raw: Vec<u8>,
    last_key: Option<i32>,
    /// Fixed-size fields: the previous row's whole field (NUL and what follows) and key.
    last_field: Vec<u8>,
    last_field_key: Option<i32>,
}

impl StrColumn {
    /// Appends raw text; returns false when it was not valid UTF-8 (stored with U+FFFD).
    #[inline]
    fn push(&mut self, raw: &[u8]) -> bool {
        if let Some(k) = self.last_key {
            if same_bytes(&self.last_raw, raw) {
                self.keys.push(k);
                return self.valid[k as usize];
            }
        }
        let k = match self.key_of.get(raw) {
            Some(k) => *k,
            None => {
                let (text, valid) = match std::str::from_utf8(raw) {
                    Ok(t) => (t.to_string(), true),
                    Err(_) => (String::from_utf8_lossy(raw).into_owned(), false),
                };
                self.values.push(text);
                self.valid.push(valid);
                let k = self.values.len() as i32 - 1;
                self.key_of.insert(raw.into(), k);
                k
            }
        };
        self.keys.push(k);
        self.last_raw.clear();
        self.last_raw.extend_from_slice(raw);
        self.last_key = Some(k);
        self.valid[k as usize]
    }

    fn push_null(&mut self) {
        self.keys.push(-1);
        self.has_nulls = true;
    }

    fn finish(&mut self) -> ArrayRef {
        let keys = if self.has_nulls { dictionary_keys(std::mem::take(&mut self.keys)) } else { PrimitiveArray::<Int32Type>::from(std::mem::take(&mut self.keys)) };
        self.has_nulls = false;
        self.valid.clear();
        let values = arrow_array::StringArray::from_iter_values(self.values.drain(..));
        self.key_of.clear();
        self.last_key = None;
        self.last_field_key = None;
        Arc::new(arrow_array::DictionaryArray::<Int32Type>::try_new(keys, Arc::new(values)).expect("keys index values"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tracedat::format::parse_event_format;

    const FORMAT: &str = "name: t\nID: 7\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n\tfield:u64 x;\toffset:8;\tsize:8;\tsigned:0;\n\nprint fmt: \"x=%llu\"\n";

    /// A block of `n` 16-byte records of FORMAT, x = 0..n.
    fn block(n: u64) -> Vec<u8> {
        (0..n).flat_map(|i| [7u8, 0, 0, 0, 1, 0, 0, 0].into_iter().chain(i.to_le_bytes())).collect()
    }

    #[test]
    fn every_field_gets_a_column_name_of_its_own() {
        let names = |v: &[&str]| column_names(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        // regmap:regcache_sync; with a field named type_2 too, the second `type` skips it.
        assert_eq!(names(&["name", "type", "type"]), ["name", "type", "type_2"]);
        assert_eq!(names(&["type", "type", "type_2"]), ["type", "type_3", "type_2"]);
        assert_eq!(names(&["nr", "nr", "nr"]), ["nr", "nr_2", "nr_3"]);
        // Row columns' names: field_<name>, then the same rule.
        assert_eq!(names(&["pid", "pid", "comm", "field_pid"]), ["field_pid", "field_pid_2", "field_comm", "field_pid_3"]);
        assert_eq!(names(&["ip", "buf", "text"]), ["ip", "buf", "text"]);
        assert_eq!(names(&["text", "text"]), ["text", "text_2"]);
    }

    #[test]
    fn columns_are_sized_for_a_whole_batch_once_not_grown_by_doubling() {
        let f = parse_event_format("s", FORMAT, 8).unwrap();
        let (batch_rows, per_block) = (1000, 300);
        let mut t = EventTable::new(&f, schema_for(&f), Endian::Little, batch_rows, &Arc::new(TraceSymbols::default()), 8);
        let data = block(per_block as u64);
        let comms = HashMap::new();
        let mut where_ts = std::collections::HashSet::new();
        // The caller cuts after the block that crosses batch_rows: 4 blocks, 1200 rows.
        while t.rows < batch_rows {
            for i in 0..per_block {
                assert!(t.stage(i as i64, i * 16, 16));
            }
            t.extract(&data, 3, &comms);
            assert!(t.ts.capacity() >= batch_rows + 2 * per_block, "capacity {} after {} rows", t.ts.capacity(), t.rows);
            where_ts.insert(t.ts.as_ptr());
        }
        assert_eq!(where_ts.len(), 1, "the ts column moved while the batch filled");
        let b = t.take_batch();
        assert_eq!(b.num_rows(), 4 * per_block);
        let x = b.column_by_name("x").unwrap().as_any().downcast_ref::<PrimitiveArray<UInt64Type>>().unwrap();
        assert_eq!(x.value(per_block + 5), 5);
        // A table that filled a batch starts the next one sized for it.
        assert!(t.ts.capacity() >= batch_rows + 2 * per_block);
    }
}
