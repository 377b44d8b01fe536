//! Where convert may write, and the atomic swap into place. Nothing a user passes as
//! `--out` may cost data: the target must be absent, an empty directory, or an earlier
//! ntscope output (its own metadata.json and nothing but what convert writes: event
//! files, kallsyms.parquet, printk_formats.parquet); it may
//! never be the trace's directory, one of its parents, or hold the trace.
//!
//! The output is built in `.<name>.tmp-<pid>` beside the target and renamed into place;
//! an older output is first renamed to `.<name>.old-<pid>` and removed only after the new
//! one is in place. Such siblings left by a crashed run (pid no longer alive) are removed.

use crate::names;
use crate::tracedat::error::TraceError;
use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

/// A checked output location.
#[derive(Debug)]
pub struct OutputTarget {
    /// The final directory (absolute, symlinks resolved in its parent).
    pub dir: PathBuf,
    /// Where the output is built.
    pub tmp: PathBuf,
    parent: PathBuf,
    name: OsString,
}

/// Limit on how many entries an earlier output may have before we stop looking
/// (a real output has a few hundred files).
const MAX_ENTRIES: usize = 100_000;

fn refuse(out: &Path, what: String, fix: &str) -> TraceError {
    TraceError::new(format!("refusing to write the output to {}: {}", out.display(), what)).file(&out.display().to_string()).fix(fix)
}

const FIX_NEW_DIR: &str = "pass --out a directory that does not exist yet, an empty one, or one an earlier `ntscope-analyzer convert` wrote (by default parquet/ beside the trace)";

/// `path` made absolute, with `.`/`..` resolved against the real directories that exist
/// (symlinks in existing parents resolved); components that do not exist yet are appended
/// as written, and may not be `..`.
fn resolve(path: &Path) -> Result<PathBuf, String> {
    let abs = if path.is_absolute() { path.to_path_buf() } else { std::env::current_dir().map_err(|e| e.to_string())?.join(path) };
    // Longest existing prefix, canonicalized; the rest appended.
    let comps: Vec<Component> = abs.components().collect();
    for cut in (1..=comps.len()).rev() {
        let prefix: PathBuf = comps[..cut].iter().collect();
        if std::fs::symlink_metadata(&prefix).is_ok() {
            let mut p = if cut == comps.len() && std::fs::symlink_metadata(&prefix).map(|m| m.file_type().is_symlink()).unwrap_or(false) {
                // The target itself is a symlink: resolve its parent only, keep its name.
                let parent = prefix.parent().unwrap_or(Path::new("/"));
                std::fs::canonicalize(parent).map_err(|e| e.to_string())?.join(prefix.file_name().unwrap_or_default())
            } else {
                std::fs::canonicalize(&prefix).map_err(|e| e.to_string())?
            };
            for c in &comps[cut..] {
                match c {
                    Component::Normal(n) => p.push(n),
                    Component::CurDir => {}
                    _ => return Err("it has \"..\" after a directory that does not exist".into()),
                }
            }
            return Ok(p);
        }
    }
    Err("no part of it exists".into())
}

/// Checks `out` as an output for `trace` and prepares the temporary directory beside it.
pub fn prepare(trace: &Path, out: &Path) -> Result<OutputTarget, TraceError> {
    if out.as_os_str().is_empty() {
        return Err(refuse(out, "the path is empty".into(), FIX_NEW_DIR));
    }
    let dir = resolve(out).map_err(|e| refuse(out, e, FIX_NEW_DIR))?;
    let (Some(parent), Some(name)) = (dir.parent().map(Path::to_path_buf), dir.file_name().map(|n| n.to_os_string())) else {
        return Err(refuse(out, "it is the root directory".into(), FIX_NEW_DIR));
    };
    let trace_real = std::fs::canonicalize(trace).map_err(|e| refuse(out, format!("cannot resolve the trace path {}: {}", trace.display(), e), FIX_NEW_DIR))?;
    let trace_dir = trace_real.parent().unwrap_or(Path::new("/"));
    if dir == trace_dir {
        return Err(refuse(out, format!("it is the directory that holds the trace ({}); replacing it would delete the trace and everything beside it", trace_real.display()), FIX_NEW_DIR));
    }
    if trace_real.starts_with(&dir) {
        return Err(refuse(out, format!("it contains the trace ({}); replacing it would delete the trace", trace_real.display()), FIX_NEW_DIR));
    }
    check_target(&dir).map_err(|e| refuse(out, e, FIX_NEW_DIR))?;
    std::fs::create_dir_all(&parent).map_err(|e| refuse(out, format!("cannot create its parent directory {}: {}", parent.display(), e), "check that the parent directory is writable"))?;
    clean_stale(&parent, &name);
    let tmp = parent.join(sibling(&name, "tmp", std::process::id()));
    std::fs::create_dir(&tmp).map_err(|e| {
        refuse(out, format!("cannot create the temporary directory {}: {}", tmp.display(), e), "check that the parent directory is writable and no other conversion into the same output is running")
    })?;
    Ok(OutputTarget { dir, tmp, parent, name })
}

impl OutputTarget {
    /// Moves the finished output into place (the old one, checked again, is moved aside
    /// first and deleted only once the new one is there).
    pub fn commit(&self) -> Result<(), TraceError> {
        let out = &self.dir;
        let io = |what: &str, p: &Path, e: std::io::Error| {
            TraceError::new(format!("cannot {} {}: {}", what, p.display(), e)).file(&out.display().to_string()).fix("check that the output's parent directory is writable")
        };
        match std::fs::symlink_metadata(out) {
            Err(_) => std::fs::rename(&self.tmp, out).map_err(|e| io("rename into", out, e)),
            Ok(_) => {
                // It may have changed since `prepare`: check again right before replacing it.
                check_target(out).map_err(|e| refuse(out, e, FIX_NEW_DIR))?;
                let old = self.parent.join(sibling(&self.name, "old", std::process::id()));
                std::fs::rename(out, &old).map_err(|e| io("move aside", out, e))?;
                if let Err(e) = std::fs::rename(&self.tmp, out) {
                    let _ = std::fs::rename(&old, out);
                    return Err(io("rename into", out, e));
                }
                let _ = std::fs::remove_dir_all(&old);
                Ok(())
            }
        }
    }

    /// Removes the temporary directory (after a failure).
    pub fn abandon(&self) {
        let _ = std::fs::remove_dir_all(&self.tmp);
    }
}

fn sibling(name: &std::ffi::OsStr, kind: &str, pid: u32) -> OsString {
    let mut s = OsString::from(".");
    s.push(name);
    s.push(format!(".{}-{}", kind, pid));
    s
}

/// Removes `.<name>.tmp-<pid>` / `.<name>.old-<pid>` directories whose process is gone.
fn clean_stale(parent: &Path, name: &std::ffi::OsStr) {
    let Ok(entries) = std::fs::read_dir(parent) else { return };
    let me = std::process::id();
    for e in entries.flatten() {
        let fname = e.file_name();
        let Some(pid) = stale_pid(&fname, name) else { continue };
        if pid == me || Path::new(&format!("/proc/{}", pid)).exists() {
            continue;
        }
        // Only directories, never through a symlink.
        if e.file_type().map(|t| t.is_dir()).unwrap_or(false) {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// The pid of a `.<name>.tmp-<pid>` or `.<name>.old-<pid>` entry for exactly this `name`.
fn stale_pid(entry: &std::ffi::OsStr, name: &std::ffi::OsStr) -> Option<u32> {
    let entry = entry.to_str()?;
    let rest = entry.strip_prefix('.')?.strip_prefix(name.to_str()?)?;
    let digits = rest.strip_prefix(".tmp-").or_else(|| rest.strip_prefix(".old-"))?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// Ok when `dir` is absent, an empty directory, or an earlier ntscope output; otherwise
/// says what it is.
pub fn check_target(dir: &Path) -> Result<(), String> {
    let meta = match std::fs::symlink_metadata(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(format!("cannot inspect it: {}", e)),
        Ok(m) => m,
    };
    let t = meta.file_type();
    if t.is_symlink() {
        return Err("it is a symbolic link".into());
    }
    if !t.is_dir() {
        return Err(if t.is_file() { format!("it is a regular file ({} bytes), not a directory", meta.len()) } else { "it is not a directory".into() });
    }
    let mut count = 0usize;
    let entries: Vec<_> = std::fs::read_dir(dir).map_err(|e| format!("cannot list it: {}", e))?.collect::<Result<_, _>>().map_err(|e| format!("cannot list it: {}", e))?;
    if entries.is_empty() {
        return Ok(());
    }
    let md = dir.join("metadata.json");
    let meta = std::fs::symlink_metadata(&md).ok().filter(|m| m.is_file() && m.len() < 64 << 20).and_then(|_| std::fs::read(&md).ok()).and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok()).filter(|v| v["converter"]["name"] == "ntscope");
    let Some(meta) = meta else {
        let names: Vec<String> = entries.iter().take(3).map(|e| e.file_name().to_string_lossy().into_owned()).collect();
        return Err(format!(
            "it is not empty ({} entries: {}{}) and has no metadata.json written by ntscope",
            entries.len(),
            names.join(", "),
            if entries.len() > 3 { ", ..." } else { "" }
        ));
    };
    // Only the event files metadata.json lists are ours: a user's <system>/<name>.parquet
    // beside them is not replaced with the output.
    let listed: std::collections::HashSet<PathBuf> =
        meta["events"].as_array().into_iter().flatten().filter_map(|e| e["file"].as_str()).map(|f| dir.join(f)).collect();
    let check_event_files = |d: &Path, count: &mut usize| check_event_files(d, count, &listed);
    for e in &entries {
        let n = e.file_name();
        let p = e.path();
        match n.to_str() {
            Some("metadata.json") => {}
            Some(crate::symbol_files::KALLSYMS_FILE | crate::symbol_files::PRINTK_FILE) if std::fs::symlink_metadata(&p).map(|m| m.is_file()).unwrap_or(false) => {}
            Some("instances") => {
                for inst in list_dirs(&p, &mut count, names::check_instance)? {
                    for sys in list_dirs(&inst, &mut count, names::check_system)? {
                        check_event_files(&sys, &mut count)?;
                    }
                }
            }
            Some(s) if names::check_system(s).is_ok() && is_real_dir(&p) => check_event_files(&p, &mut count)?,
            _ => return Err(format!("it holds {}, which ntscope does not write", p.display())),
        }
    }
    Ok(())
}

fn is_real_dir(p: &Path) -> bool {
    std::fs::symlink_metadata(p).map(|m| m.file_type().is_dir()).unwrap_or(false)
}

/// Subdirectories of `dir` whose names pass `check`; anything else is an error.
fn list_dirs(dir: &Path, count: &mut usize, check: fn(&str) -> Result<(), String>) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).map_err(|e| format!("cannot list {}: {}", dir.display(), e))? {
        let e = e.map_err(|e| format!("cannot list {}: {}", dir.display(), e))?;
        *count += 1;
        if *count > MAX_ENTRIES {
            return Err(format!("it has more than {} entries", MAX_ENTRIES));
        }
        let p = e.path();
        let ok = e.file_name().to_str().map(|s| check(s).is_ok()).unwrap_or(false) && is_real_dir(&p);
        if !ok {
            return Err(format!("it holds {}, which ntscope does not write", p.display()));
        }
        out.push(p);
    }
    Ok(out)
}

/// `dir` must hold only regular files named `<event>.parquet` that metadata.json lists.
fn check_event_files(dir: &Path, count: &mut usize, listed: &std::collections::HashSet<PathBuf>) -> Result<(), String> {
    for e in std::fs::read_dir(dir).map_err(|e| format!("cannot list {}: {}", dir.display(), e))? {
        let e = e.map_err(|e| format!("cannot list {}: {}", dir.display(), e))?;
        *count += 1;
        if *count > MAX_ENTRIES {
            return Err(format!("it has more than {} entries", MAX_ENTRIES));
        }
        let p = e.path();
        let name = e.file_name();
        let ok = name.to_str().and_then(|s| s.strip_suffix(".parquet")).map(|ev| names::check_event(ev).is_ok()).unwrap_or(false)
            && std::fs::symlink_metadata(&p).map(|m| m.is_file()).unwrap_or(false);
        if !ok {
            return Err(format!("it holds {}, which ntscope does not write", p.display()));
        }
        if !listed.contains(&p) {
            return Err(format!("it holds {}, which its metadata.json does not list (ntscope did not write it)", p.display()));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stale_names() {
        let n = std::ffi::OsStr::new("parquet");
        assert_eq!(stale_pid(std::ffi::OsStr::new(".parquet.tmp-123"), n), Some(123));
        assert_eq!(stale_pid(std::ffi::OsStr::new(".parquet.old-9"), n), Some(9));
        assert_eq!(stale_pid(std::ffi::OsStr::new(".parquet2.tmp-123"), n), None);
        assert_eq!(stale_pid(std::ffi::OsStr::new(".parquet.tmp-12x"), n), None);
        assert_eq!(stale_pid(std::ffi::OsStr::new(".parquet.tmp-"), n), None);
        assert_eq!(stale_pid(std::ffi::OsStr::new("parquet.tmp-1"), n), None);
    }

    #[test]
    fn only_listed_event_files_are_ours() {
        let dir = std::env::temp_dir().join(format!("ntscope-out-dir-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("nvme")).unwrap();
        std::fs::write(dir.join("metadata.json"), r#"{"converter": {"name": "ntscope"}, "events": [{"file": "nvme/nvme_setup_cmd.parquet"}]}"#).unwrap();
        std::fs::write(dir.join("nvme/nvme_setup_cmd.parquet"), b"PAR1").unwrap();
        assert_eq!(check_target(&dir), Ok(()));
        // a user's file named like an event file: not listed, so not ours to replace
        std::fs::write(dir.join("nvme/my_analysis.parquet"), b"mine").unwrap();
        let err = check_target(&dir).unwrap_err();
        assert!(err.contains("my_analysis.parquet, which its metadata.json does not list"), "{}", err);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
