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
    /// Fixed array of integers, e.g. `u8 cdw10[24]`.
    Array { len: usize, elem_size: usize, signed: bool },
    /// `__data_loc char[]` / `__rel_loc char[]`: dynamic text.
    DynStr { relative: bool },
    /// `__data_loc T[]` / `__rel_loc T[]`: dynamic array of integers.
    DynArray { elem_size: usize, signed: bool, relative: bool },
    /// Anything else (odd sizes): raw bytes.
    Bytes { size: usize },
}

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
    /// Bytes an event record must have to hold every fixed field.
    pub fn min_size(&self) -> usize {
        self.fields.iter().map(|f| f.offset + f.size).max().unwrap_or(0)
    }
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

/// Parses one `field:...; offset:...; size:...; signed:...;` line.
fn parse_field_line(line: &str, long_size: usize) -> Option<Field> {
    let line = line.trim();
    let rest = line.strip_prefix("field:")?;
    let mut decl = "";
    let mut offset = None;
    let mut size = None;
    let mut signed = false;
    for (i, part) in rest.split(';').enumerate() {
        let part = part.trim();
        if i == 0 {
            decl = part;
        } else if let Some(v) = part.strip_prefix("offset:") {
            offset = v.trim().parse::<usize>().ok();
        } else if let Some(v) = part.strip_prefix("size:") {
            size = v.trim().parse::<usize>().ok();
        } else if let Some(v) = part.strip_prefix("signed:") {
            signed = v.trim() == "1";
        }
    }
    let (offset, size) = (offset?, size?);
    let (ty, name, array) = split_decl(decl);
    let dynamic = ty.starts_with("__data_loc") || ty.starts_with("__rel_loc");
    let kind = if dynamic {
        let relative = ty.starts_with("__rel_loc");
        let base = ty.trim_start_matches("__data_loc").trim_start_matches("__rel_loc").trim();
        let base = base.trim_end_matches("[]").trim();
        if base.contains("char") {
            FieldKind::DynStr { relative }
        } else {
            let elem_size = base_type_size(base, long_size).max(1);
            FieldKind::DynArray { elem_size, signed, relative }
        }
    } else if let Some(arr) = array {
        let base_size = base_type_size(&ty, long_size);
        let len = match arr.parse::<usize>() {
            Ok(n) => n,
            Err(_) => if base_size > 0 { size / base_size } else { size },
        };
        if ty.contains("char") && !ty.contains('*') {
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
    Some(Field { common: name.starts_with("common_"), name, type_decl: ty, offset, size, signed, kind })
}

/// Parses a whole format file. `system` comes from the file's section, not the text.
pub fn parse_event_format(system: &str, text: &str, long_size: usize) -> Result<EventFormat> {
    let mut name = None;
    let mut id = None;
    let mut fields = Vec::new();
    for line in text.lines() {
        let t = line.trim();
        if let Some(v) = t.strip_prefix("name:") {
            name = Some(v.trim().to_string());
        } else if let Some(v) = t.strip_prefix("ID:") {
            id = v.trim().parse::<u32>().ok();
        } else if t.starts_with("field:") {
            match parse_field_line(t, long_size) {
                Some(f) => fields.push(f),
                None => {
                    return Err(TraceError::new(format!("cannot parse field line {:?} in format of {}", t, system))
                        .fix("the event format text is damaged: re-record, or report the kernel version if this is a new format"))
                }
            }
        } else if t.starts_with("print fmt:") {
            break;
        }
    }
    match (name, id) {
        (Some(name), Some(id)) => Ok(EventFormat { id, system: system.to_string(), name, fields, text: text.to_string() }),
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
        if let Some(f) = parse_field_line(line, 8) {
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
