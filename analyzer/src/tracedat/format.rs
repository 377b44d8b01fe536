//! Event format files (tracefs `events/<system>/<event>/format`) parsed into typed field
//! layouts. Only the field declarations matter to us; print formats are not interpreted.

use super::error::{Result, TraceError};

/// How a field's bytes are to be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FieldKind {
    /// Integer of 1, 2, 4 or 8 bytes.
    Int { size: usize, signed: bool },
    /// Fixed `char x[N]`: text up to the first NUL.
    Str { len: usize },
    /// Fixed array of integers, e.g. `u8 cdw10[24]`, `unsigned char line[32]`.
    Array { len: usize, elem_size: usize, signed: bool },
    /// `__data_loc char[]` / `__rel_loc char[]`: dynamic text.
    DynStr { relative: bool },
    /// `__data_loc T[]` / `__rel_loc T[]`: dynamic array of integers.
    DynArray { elem_size: usize, signed: bool, relative: bool },
    /// Anything else (odd sizes): raw bytes.
    Bytes { size: usize },
    /// A `char` field of declared size 0 (`char buf[]`, old kernels' `char buf`): the
    /// record's bytes from its offset to the end, as text up to the first NUL.
    RestStr,
    /// An integer field of declared size 0 (`unsigned long caller[]`): the whole elements
    /// from its offset to the end of the record.
    RestArray { elem_size: usize, signed: bool },
    /// The rest of the record as bytes: `void` fields of size 0, and the fields whose
    /// bytes are binary whatever their C type (`ftrace:bprint.buf`, the packed arguments
    /// of trace_printk; `ftrace:raw_data.buf`, what was written to trace_marker_raw).
    RestBytes,
}

/// The largest record a ring-buffer page can hold (the largest page accepted): no fixed
/// field can lie beyond it.
pub const MAX_RECORD: usize = 1 << 20;

#[derive(Clone, Debug)]
pub struct Field {
    pub name: String,
    pub type_decl: String,
    pub offset: usize,
    pub size: usize,
    pub signed: bool,
    pub kind: FieldKind,
    pub common: bool,
}

#[derive(Clone, Debug)]
pub struct EventFormat {
    pub id: u32,
    pub system: String,
    pub name: String,
    /// Every field in format order, common fields first.
    pub fields: Vec<Field>,
    /// The format text as the file holds it.
    pub text: String,
}

impl EventFormat {
    pub fn field(&self, name: &str) -> Option<&Field> {
        self.fields.iter().find(|f| f.name == name)
    }
    /// Bytes an event record must have to hold every fixed field (each field ends within
    /// `MAX_RECORD`: `parse_event_format` refuses the others).
    pub fn min_size(&self) -> usize {
        self.fields.iter().map(|f| f.offset + f.size).max().unwrap_or(0)
    }
}

/// The C type without qualifiers and location markers (`const`, `volatile`,
/// `__data_loc`, `__rel_loc`, a trailing `[]`), words separated by one space.
fn bare_type(ty: &str) -> String {
    let t = ty.trim().trim_end_matches("[]").trim();
    t.split_whitespace().filter(|w| !matches!(*w, "const" | "volatile" | "__data_loc" | "__rel_loc")).collect::<Vec<_>>().join(" ")
}

/// True when an array of this C type is text: plain `char` only (`unsigned char`,
/// `u8`, `signed char` arrays hold bytes, not characters).
fn is_text_type(ty: &str) -> bool {
    bare_type(ty) == "char"
}

/// Size in bytes of a base C type name as used in format files (for element sizes).
fn base_type_size(base: &str, long_size: usize) -> usize {
    let t = base.trim();
    if t.contains('*') {
        return long_size;
    }
    let words: Vec<&str> = t.split_whitespace().filter(|w| *w != "const" && *w != "volatile" && *w != "unsigned" && *w != "signed").collect();
    let t = words.join(" ");
    match t.as_str() {
        "char" | "u8" | "s8" | "__u8" | "__s8" | "bool" | "_Bool" | "int8_t" | "uint8_t" => 1,
        "short" | "short int" | "u16" | "s16" | "__u16" | "__s16" | "__le16" | "__be16" | "int16_t" | "uint16_t" => 2,
        "int" | "u32" | "s32" | "__u32" | "__s32" | "__le32" | "__be32" | "int32_t" | "uint32_t" | "pid_t" | "gfp_t" | "dev_t" => 4,
        "long long" | "long long int" | "u64" | "s64" | "__u64" | "__s64" | "__le64" | "__be64" | "int64_t" | "uint64_t" | "sector_t" | "loff_t" => 8,
        "long" | "long int" | "size_t" | "ssize_t" => long_size,
        _ => 0,
    }
}

/// Splits a declaration like `unsigned char disk[32]` into (type, name, array text).
fn split_decl(decl: &str) -> (String, String, Option<String>) {
    let decl = decl.trim();
    let (head, array) = if decl.ends_with(']') {
        match decl.rfind('[') {
            Some(i) => (&decl[..i], Some(decl[i + 1..decl.len() - 1].trim().to_string())),
            None => (decl, None),
        }
    } else {
        (decl, None)
    };
    let head = head.trim_end();
    let cut = head.rfind(|c: char| c.is_whitespace() || c == '*').map(|i| i + 1).unwrap_or(0);
    let name = head[cut..].to_string();
    let ty = head[..cut].trim().to_string();
    (ty, name, array)
}

/// Parses one `field:...; offset:...; size:...; signed:...;` line; Err says what is wrong.
fn parse_field_line(line: &str, long_size: usize) -> std::result::Result<Field, String> {
    let line = line.trim();
    let rest = line.strip_prefix("field:").ok_or("it does not start with \"field:\"")?;
    let mut decl = "";
    let mut offset = None;
    let mut size = None;
    let mut signed = false;
    let number = |what: &str, v: &str| -> std::result::Result<usize, String> {
        v.trim().parse::<usize>().map_err(|_| format!("its {} {:?} is not a number of bytes", what, v.trim()))
    };
    for (i, part) in rest.split(';').enumerate() {
        let part = part.trim();
        if i == 0 {
            decl = part;
        } else if let Some(v) = part.strip_prefix("offset:") {
            offset = Some(number("offset", v)?);
        } else if let Some(v) = part.strip_prefix("size:") {
            size = Some(number("size", v)?);
        } else if let Some(v) = part.strip_prefix("signed:") {
            signed = v.trim() == "1";
        }
    }
    let (ty, name, array) = split_decl(decl);
    let (Some(offset), Some(size)) = (offset, size) else {
        return Err(format!("field {:?} has no offset or no size", name));
    };
    let dynamic = ty.starts_with("__data_loc") || ty.starts_with("__rel_loc");
    let kind = if dynamic {
        let relative = ty.starts_with("__rel_loc");
        let base = bare_type(&ty);
        if is_text_type(&ty) {
            FieldKind::DynStr { relative }
        } else {
            let elem_size = base_type_size(&base, long_size).max(1);
            FieldKind::DynArray { elem_size, signed, relative }
        }
    } else if size == 0 {
        // A flexible array member: the rest of the record.
        let elem_size = base_type_size(&ty, long_size);
        if is_text_type(&ty) {
            FieldKind::RestStr
        } else if matches!(elem_size, 1 | 2 | 4 | 8) {
            FieldKind::RestArray { elem_size, signed }
        } else {
            FieldKind::RestBytes
        }
    } else if let Some(arr) = array {
        let base_size = base_type_size(&ty, long_size);
        let len = match arr.parse::<usize>() {
            Ok(n) => n,
            Err(_) => if base_size > 0 { size / base_size } else { size },
        };
        if is_text_type(&ty) {
            FieldKind::Str { len: size }
        } else if len > 0 && size % len == 0 && matches!(size / len, 1 | 2 | 4 | 8) {
            FieldKind::Array { len, elem_size: size / len, signed }
        } else {
            FieldKind::Bytes { size }
        }
    } else if matches!(size, 1 | 2 | 4 | 8) {
        FieldKind::Int { size, signed }
    } else {
        FieldKind::Bytes { size }
    };
    Ok(Field { common: name.starts_with("common_"), name, type_decl: ty, offset, size, signed, kind })
}

/// Fields whose bytes are binary whatever their declared C type (see `FieldKind::RestBytes`).
fn binary_by_meaning(system: &str, event: &str, field: &Field) -> bool {
    system == "ftrace" && matches!((event, field.name.as_str()), ("bprint", "buf") | ("raw_data", "buf")) && field.size == 0
}

/// `ftrace:kernel_stack`'s callers: kernels >= 5.x declare `unsigned long caller[8]` but write
/// `size` entries (its `int size` field), as many as the stack has: the record ends after the
/// last one. Read as the rest of the record, so a stack of 3 frames is not a short record and
/// one of 12 is not cut to 8 (as trace-cmd prints them).
fn stack_by_meaning(system: &str, event: &str, field: &Field) -> Option<FieldKind> {
    match (system, event, field.name.as_str(), &field.kind) {
        ("ftrace", "kernel_stack", "caller", FieldKind::Array { elem_size, signed, .. }) => {
            Some(FieldKind::RestArray { elem_size: *elem_size, signed: *signed })
        }
        _ => None,
    }
}

/// Parses a whole format file. `system` comes from the file's section, not the text.
pub fn parse_event_format(system: &str, text: &str, long_size: usize) -> Result<EventFormat> {
    let mut name = None;
    let mut id = None;
    let mut fields = Vec::new();
    let damaged = |what: String| {
        TraceError::new(what).fix("the event formats section is damaged: copy the file again or re-record (report the kernel version if the file is intact)")
    };
    for line in text.lines() {
        let t = line.trim();
        if let Some(v) = t.strip_prefix("name:") {
            name = Some(v.trim().to_string());
        } else if let Some(v) = t.strip_prefix("ID:") {
            id = v.trim().parse::<u32>().ok();
        } else if t.starts_with("field:") {
            let event = name.as_deref().unwrap_or("?");
            fields.push(parse_field_line(t, long_size).map_err(|why| damaged(format!("event format {}:{}: cannot read the field line {:?}: {}", system, event, t, why)))?);
        } else if t.starts_with("print fmt:") {
            break;
        }
    }
    match (name, id) {
        (Some(name), Some(id)) => {
            for f in &mut fields {
                if f.offset.checked_add(f.size).map_or(true, |end| end > MAX_RECORD) {
                    return Err(damaged(format!(
                        "event format {}:{}: field {:?} has offset {} and size {}, which end beyond any record (a record is at most {} bytes)",
                        system, name, f.name, f.offset, f.size, MAX_RECORD
                    )));
                }
                if binary_by_meaning(system, &name, f) {
                    f.kind = FieldKind::RestBytes;
                }
                if let Some(kind) = stack_by_meaning(system, &name, f) {
                    // the callers the record holds, however many (min_size then ends before them)
                    f.kind = kind;
                    f.size = 0;
                }
            }
            Ok(EventFormat { id, system: system.to_string(), name, fields, text: text.to_string() })
        }
        _ => Err(TraceError::new(format!(
            "event format in system {:?} has no name/ID line: {:?}",
            system,
            text.chars().take(80).collect::<String>()
        ))
        .fix("the event formats section is damaged: re-record or copy the file again")),
    }
}

/// Layout of a ring-buffer page, from the `header_page` text.
#[derive(Clone, Copy, Debug)]
pub struct PageHeader {
    /// Size of the `commit` word (the kernel's long).
    pub commit_size: usize,
    /// Offset of the first event in the page.
    pub data_offset: usize,
}

pub fn parse_header_page(text: &str) -> Result<PageHeader> {
    let mut commit = None;
    let mut data = None;
    for line in text.lines() {
        if let Ok(f) = parse_field_line(line, 8) {
            match f.name.as_str() {
                "commit" => commit = Some(f.size),
                "data" => data = Some(f.offset),
                _ => {}
            }
        }
    }
    match (commit, data) {
        (Some(c), Some(d)) if (c == 4 || c == 8) && d >= 8 + c => Ok(PageHeader { commit_size: c, data_offset: d }),
        _ => Err(TraceError::new(format!("cannot read ring-buffer page layout from header_page: {:?}", text))
            .fix("the header info section is damaged: copy the file again or re-record")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NVME_SETUP: &str = "name: nvme_setup_cmd\nID: 1296\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n\tfield:char disk[32];\toffset:8;\tsize:32;\tsigned:0;\n\tfield:int ctrl_id;\toffset:40;\tsize:4;\tsigned:1;\n\tfield:u8 cdw10[24];\toffset:60;\tsize:24;\tsigned:0;\n\tfield:__data_loc char[] name;\toffset:84;\tsize:4;\tsigned:0;\n\tfield:__rel_loc u32[] vals;\toffset:88;\tsize:4;\tsigned:0;\n\tfield:const char * fmt;\toffset:96;\tsize:8;\tsigned:0;\n\nprint fmt: \"x\"\n";

    #[test]
    fn parses_every_kind_of_field() {
        let f = parse_event_format("nvme", NVME_SETUP, 8).unwrap();
        assert_eq!((f.id, f.name.as_str(), f.system.as_str()), (1296, "nvme_setup_cmd", "nvme"));
        let kinds: Vec<(&str, FieldKind)> = f.fields.iter().map(|x| (x.name.as_str(), x.kind.clone())).collect();
        assert_eq!(kinds[0], ("common_type", FieldKind::Int { size: 2, signed: false }));
        assert_eq!(kinds[3], ("common_pid", FieldKind::Int { size: 4, signed: true }));
        assert_eq!(kinds[4], ("disk", FieldKind::Str { len: 32 }));
        assert_eq!(kinds[5], ("ctrl_id", FieldKind::Int { size: 4, signed: true }));
        assert_eq!(kinds[6], ("cdw10", FieldKind::Array { len: 24, elem_size: 1, signed: false }));
        assert_eq!(kinds[7], ("name", FieldKind::DynStr { relative: false }));
        assert_eq!(kinds[8], ("vals", FieldKind::DynArray { elem_size: 4, signed: false, relative: true }));
        assert_eq!(kinds[9], ("fmt", FieldKind::Int { size: 8, signed: false }));
        assert!(f.fields[0].common && !f.fields[4].common);
        assert_eq!(f.min_size(), 104);
    }

    #[test]
    fn only_plain_char_arrays_are_text_and_size_0_fields_are_the_rest() {
        let text = format_of("ftrace", "print", &[
            "field:unsigned char line[32];\toffset:8;\tsize:32;\tsigned:0;",
            "field:const char name[8];\toffset:40;\tsize:8;\tsigned:1;",
            "field:__data_loc unsigned char[] raw;\toffset:48;\tsize:4;\tsigned:0;",
            "field:u8 bytes[4];\toffset:52;\tsize:4;\tsigned:0;",
            "field:char buf;\toffset:56;\tsize:0;\tsigned:0;",
        ]);
        let f = parse_event_format("ftrace", &text, 8).unwrap();
        assert_eq!(kinds(&f), [
            FieldKind::Array { len: 32, elem_size: 1, signed: false },
            FieldKind::Str { len: 8 },
            FieldKind::DynArray { elem_size: 1, signed: false, relative: false },
            FieldKind::Array { len: 4, elem_size: 1, signed: false },
            FieldKind::RestStr,
        ]);
        let rest = format_of("ftrace", "kernel_stack", &[
            "field:char buf[];\toffset:8;\tsize:0;\tsigned:0;",
            "field:unsigned long caller;\toffset:8;\tsize:0;\tsigned:0;",
            "field:u32 words[];\toffset:8;\tsize:0;\tsigned:0;",
            "field:void data;\toffset:8;\tsize:0;\tsigned:0;",
        ]);
        let f = parse_event_format("ftrace", &rest, 4).unwrap();
        assert_eq!(kinds(&f), [
            FieldKind::RestStr,
            FieldKind::RestArray { elem_size: 4, signed: false },
            FieldKind::RestArray { elem_size: 4, signed: false },
            FieldKind::RestBytes,
        ]);
        // Binary whatever their C type: trace_printk's packed arguments, trace_marker_raw's bytes.
        for (event, decl) in [("bprint", "field:u32 buf[];\toffset:24;\tsize:0;\tsigned:0;"), ("raw_data", "field:char buf[];\toffset:12;\tsize:0;\tsigned:0;")] {
            let f = parse_event_format("ftrace", &format_of("ftrace", event, &[decl]), 8).unwrap();
            assert_eq!(kinds(&f), [FieldKind::RestBytes], "{}", event);
            let other = parse_event_format("mine", &format_of("mine", event, &[decl]), 8).unwrap();
            assert_ne!(kinds(&other), [FieldKind::RestBytes], "only ftrace's own {}", event);
        }
        // kernel_stack's callers declared caller[8] (kernels >= 5.x): every caller the record holds
        let stack = format_of("ftrace", "kernel_stack", &[
            "field:int size;\toffset:8;\tsize:4;\tsigned:1;",
            "field:unsigned long caller[8];\toffset:16;\tsize:64;\tsigned:0;",
        ]);
        let f = parse_event_format("ftrace", &stack, 8).unwrap();
        assert_eq!(kinds(&f)[1], FieldKind::RestArray { elem_size: 8, signed: false });
        assert_eq!(f.min_size(), 16, "a stack of fewer than 8 frames is no short record");
        let other = parse_event_format("mine", &format_of("mine", "kernel_stack", &[
            "field:unsigned long caller[8];\toffset:16;\tsize:64;\tsigned:0;",
        ]), 8).unwrap();
        assert_eq!(kinds(&other), [FieldKind::Array { len: 8, elem_size: 8, signed: false }], "only ftrace's own");
    }

    #[test]
    fn fields_beyond_any_record_are_refused_naming_event_and_field() {
        for (decl, want) in [
            ("field:u32 seq;\toffset:18446744073709551615;\tsize:4;\tsigned:0;", "event format s:e: field \"seq\" has offset 18446744073709551615 and size 4, which end beyond any record"),
            ("field:u32 seq;\toffset:1048573;\tsize:4;\tsigned:0;", "field \"seq\" has offset 1048573 and size 4"),
            ("field:u32 seq;\toffset:-1;\tsize:4;\tsigned:0;", "event format s:e: cannot read the field line"),
            ("field:u32 seq;\toffset:8;\tsize:99999999999999999999;\tsigned:0;", "its size \"99999999999999999999\" is not a number of bytes"),
        ] {
            let e = parse_event_format("s", &format_of("s", "e", &[decl]), 8).unwrap_err();
            assert!(e.what.contains(want) && !e.fix.is_empty(), "{}: {}", decl, e);
        }
        assert!(parse_event_format("s", &format_of("s", "e", &["field:u32 seq;\toffset:1048572;\tsize:4;\tsigned:0;"]), 8).is_ok());
    }

    fn format_of(system: &str, event: &str, fields: &[&str]) -> String {
        let _ = system;
        let mut s = format!("name: {}\nID: 7\nformat:\n", event);
        for f in fields {
            s.push('\t');
            s.push_str(f);
            s.push('\n');
        }
        s + "\nprint fmt: \"x\"\n"
    }

    fn kinds(f: &EventFormat) -> Vec<FieldKind> {
        f.fields.iter().map(|x| x.kind.clone()).collect()
    }

    #[test]
    fn rejects_format_without_id() {
        let e = parse_event_format("x", "name: foo\nformat:\n", 8).unwrap_err();
        assert!(e.what.contains("no name/ID"), "{}", e);
    }

    #[test]
    fn header_page_layout_64bit() {
        let t = "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n\tfield: char data;\toffset:16;\tsize:4080;\tsigned:1;\n";
        let h = parse_header_page(t).unwrap();
        assert_eq!((h.commit_size, h.data_offset), (8, 16));
    }
}
