//! Which Parquet file each (buffer, event type) goes to, decided once before decoding.
//! Every name that becomes a path or a column is checked (`names`); a type or an
//! instance with a name that is not safe is skipped, and the reason is recorded as a
//! loss in metadata.json, so one odd name does not stop the rest of the trace.

use crate::columns::{output_fields, schema_for};
use crate::names;
use crate::parquet_out::event_file;
use crate::tracedat::file::TraceFile;
use arrow_schema::SchemaRef;
use std::collections::{BTreeMap, HashMap};

pub struct FileSpec {
    pub rel: String,
    pub schema: SchemaRef,
    pub buffer: usize,
    pub id: u32,
    /// Written even when empty (top buffer, recorded systems: stable schema for SQL).
    pub ensure: bool,
}

pub struct Layout {
    pub files: Vec<FileSpec>,
    file_of: HashMap<(usize, u32), usize>,
    /// Event ids not converted, with the reason.
    pub skipped_types: BTreeMap<u32, String>,
    /// Buffers (instances) not converted, by index, with the reason.
    pub skipped_buffers: BTreeMap<usize, String>,
}

/// Why an event format cannot be written, if it cannot. (A field name used twice is
/// not a reason: `columns::column_names` gives each its own column.)
fn type_problem(system: &str, event: &str, fields: &[String]) -> Option<String> {
    if let Err(e) = names::check_system(system).and_then(|_| names::check_event(event)) {
        return Some(e);
    }
    fields.iter().find_map(|f| names::check_field(f).err())
}

impl Layout {
    pub fn new(tf: &TraceFile) -> Layout {
        let mut skipped_types = BTreeMap::new();
        let mut ids: Vec<u32> = tf.events.keys().copied().collect();
        ids.sort();
        let mut by_name: HashMap<(String, String), u32> = HashMap::new();
        let mut types = Vec::new();
        for id in ids {
            let f = &tf.events[&id];
            let fields: Vec<String> = output_fields(f).into_iter().map(|x| x.name).collect();
            if let Some(why) = type_problem(&f.system, &f.name, &fields) {
                skipped_types.insert(id, why);
                continue;
            }
            if let Some(other) = by_name.get(&(f.system.clone(), f.name.clone())) {
                skipped_types.insert(id, format!("event {}:{} has two formats (ids {} and {}); the first is converted", f.system, f.name, other, id));
                continue;
            }
            by_name.insert((f.system.clone(), f.name.clone()), id);
            types.push((id, schema_for(f)));
        }
        let mut skipped_buffers = BTreeMap::new();
        let mut files = Vec::new();
        let mut file_of = HashMap::new();
        for (bi, b) in tf.buffers.iter().enumerate() {
            if b.latency {
                continue;
            }
            if !b.name.is_empty() {
                if let Err(e) = names::check_instance(&b.name) {
                    skipped_buffers.insert(bi, e);
                    continue;
                }
            }
            for (id, schema) in &types {
                let f = &tf.events[id];
                file_of.insert((bi, *id), files.len());
                files.push(FileSpec {
                    rel: event_file(&b.name, &f.system, &f.name),
                    schema: schema.clone(),
                    buffer: bi,
                    id: *id,
                    ensure: b.name.is_empty() && f.system != "ftrace",
                });
            }
        }
        Layout { files, file_of, skipped_types, skipped_buffers }
    }

    #[inline]
    pub fn file_of(&self, buffer: usize, id: u32) -> Option<usize> {
        self.file_of.get(&(buffer, id)).copied()
    }

    pub fn schema(&self, buffer: usize, id: u32) -> Option<&SchemaRef> {
        self.file_of(buffer, id).map(|f| &self.files[f].schema)
    }
}
