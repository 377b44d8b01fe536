//! Names that come from a trace file and become part of a path or a column name:
//! systems, events, instances, fields. They are data written by whoever made the file,
//! so each is checked against what the kernel itself allows before it is used.
//!
//! - system and event names: a character of C identifiers (`[A-Za-z0-9_]`) first, then
//!   also `-` (and `.` in systems). The kernel's TRACE_SYSTEM may start with a digit
//!   (`9p` and its `9p_client_req` ...) or hold a `-` (`xhci-hcd`, whose events
//!   libtraceevent reads like any other), and probe groups may contain a dot.
//! - field names: C identifiers (`[A-Za-z_][A-Za-z0-9_]*`), as in the kernel's structs.
//! - instance names (any mkdir name in tracefs): a conservative set,
//!   `[A-Za-z0-9_][A-Za-z0-9_.+-]*`; never empty, `.`-led, `..`, or holding `/`.
//!
//! All: at most 255 bytes (one path component on Linux).

const MAX_LEN: usize = 255;

fn check(name: &str, what: &str, first_ok: impl Fn(u8) -> bool, rest_ok: impl Fn(u8) -> bool, rule: &str) -> Result<(), String> {
    let b = name.as_bytes();
    let bad = if b.is_empty() {
        Some("it is empty".to_string())
    } else if b.len() > MAX_LEN {
        Some(format!("it is {} bytes long (at most {})", b.len(), MAX_LEN))
    } else if !first_ok(b[0]) {
        Some(format!("it starts with {:?}", name.chars().next().unwrap()))
    } else if name.contains("..") {
        Some("it contains \"..\"".to_string())
    } else {
        b.iter().position(|&c| !rest_ok(c)).map(|i| format!("byte {} is {:?}", i, String::from_utf8_lossy(&b[i..i + 1])))
    };
    match bad {
        None => Ok(()),
        Some(why) => Err(format!("{} name {:?} is not {} ({})", what, name, rule, why)),
    }
}

fn ident_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

pub fn check_system(name: &str) -> Result<(), String> {
    check(name, "system", ident_char, |c| ident_char(c) || matches!(c, b'.' | b'-'), "[A-Za-z0-9_] then [A-Za-z0-9_.-]")
}

pub fn check_event(name: &str) -> Result<(), String> {
    check(name, "event", ident_char, |c| ident_char(c) || c == b'-', "[A-Za-z0-9_] then [A-Za-z0-9_-]")
}

pub fn check_field(name: &str) -> Result<(), String> {
    check(name, "field", |c| c.is_ascii_alphabetic() || c == b'_', ident_char, "a C identifier")
}

pub fn check_instance(name: &str) -> Result<(), String> {
    check(name, "instance", ident_char, |c| ident_char(c) || matches!(c, b'.' | b'+' | b'-'), "made of [A-Za-z0-9_.+-]")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_names_pass() {
        for s in ["block", "nvme", "nvmet_tcp", "9p", "ftrace", "probe.grp", "_x", "xhci-hcd"] {
            check_system(s).unwrap();
        }
        for e in ["nvme_setup_cmd", "9p_client_req", "sched_switch", "xhci_urb_enqueue", "a-b"] {
            check_event(e).unwrap();
        }
        for f in ["common_pid", "cdw10", "__probe_ip", "rwbs"] {
            check_field(f).unwrap();
        }
        for i in ["inst", "nvme-tcp", "a.b", "x+1", "Inst_2"] {
            check_instance(i).unwrap();
        }
    }

    #[test]
    fn path_tricks_fail() {
        for s in ["", ".", "..", "a/b", "../x", ".hidden", "a..b", "a\\b", "a b", "a\0b", "é", "-x", "-"] {
            assert!(check_system(s).is_err(), "system {:?}", s);
            assert!(check_event(s).is_err(), "event {:?}", s);
            assert!(check_instance(s).is_err(), "instance {:?}", s);
            assert!(check_field(s).is_err(), "field {:?}", s);
        }
        assert!(check_field("9x").is_err());
        assert!(check_field("a-b").is_err());
        assert!(check_event("a.b").is_err());
        assert!(check_system(&"x".repeat(256)).is_err());
        let e = check_system("..").unwrap_err();
        assert!(e.contains("system name \"..\""), "{}", e);
    }
}
