//! The slices of one io on the Perfetto timeline, laid out from what SQL computed: the io's row
//! (its two tracks, its root's span, its arguments) and the spans of its stages (each stage's
//! from..to times and own duration, `io_stage_durations`), placed by the slot table
//! (`timeline_slots`, sql/timeline/timeline.sql: which slice nests in which, sibling order, the
//! depth-first positions, the flows). Drawing only: every time and duration comes from SQL;
//! here a slice is clamped so that slices nest on their track (a child within its parent,
//! siblings one after the other: only offset-based stages can need it, by up to the clock
//! uncertainty), which one sort per io's few rows did in SQL at a quarter of the timeline's cost.
//!
//! The rules, per io (reports/README.md "timeline.perfetto-trace" says what a user sees):
//! - roots (depth 0): the initiator root spans root_s..max(root_e, root_s); the target root,
//!   when the io has target spans, spans their earliest start to their latest end;
//! - a stage at depth d (1..3) is drawn when its parent slice is: start clamped into the parent
//!   (`min(max(s, parent.s), parent.e)`), end likewise (`min(max(e, s, parent.s), parent.e)`),
//!   then its start moved after the clamped ends of its earlier siblings (sibling order);
//! - a stage whose duration is unknown is laid out (its siblings and children move around it)
//!   but not drawn; a drawn stage whose duration differs from its drawn span (clock-free stages,
//!   clamped slices) carries it as `stage_dur_ns`;
//! - flows: the slice marked `out` hands over to the target root, which hands back to the slice
//!   marked `back`, when both ends are drawn.

use crate::timeline::TimelineError;

/// A packet's place in the output: (ts, track uuid, pos).
pub type Key = (i64, i64, i64);

/// Flow marks of a slot (timeline_slots.flow).
pub const FLOW_NONE: i64 = 0;
pub const FLOW_OUT: i64 = 1;
pub const FLOW_BACK: i64 = 2;

/// One slice kind of an io (a row of timeline_slots).
#[derive(Clone, Debug)]
pub struct Slot {
    /// 0 initiator, 1 target: which of the io's two tracks holds it
    pub part: usize,
    /// the slot it nests in (None for the roots)
    pub parent: Option<i64>,
    pub depth: i64,
    pub sib: i64,
    pub begin_pos: i64,
    pub end_pos: i64,
    pub flow: i64,
    pub name_iid: i64,
}

/// The slot table, checked: two roots (depth 0, one per part), every other slot's parent a slot
/// of the same part one level up; slot ids index it (0..=MAX_SLOT).
pub struct Layout {
    slots: Vec<Option<Slot>>,
    roots: [usize; 2],
    /// non-root slots in the order they are laid out: by depth, parent, sibling rank
    order: Vec<usize>,
}

/// The largest slot id (a stage table has a few dozen stages).
pub const MAX_SLOT: i64 = 4095;

impl Layout {
    /// rows: (slot, Slot) as read from the slot table.
    pub fn new(rows: Vec<(i64, Slot)>) -> Result<Layout, TimelineError> {
        let mut slots: Vec<Option<Slot>> = Vec::new();
        for (id, s) in rows {
            if !(0..=MAX_SLOT).contains(&id) {
                return Err(TimelineError(format!("slot {} is not in 0..={}", id, MAX_SLOT)));
            }
            if s.part > 1 {
                return Err(TimelineError(format!("slot {}: part_no {} is neither 0 nor 1", id, s.part)));
            }
            let id = id as usize;
            if slots.len() <= id {
                slots.resize(id + 1, None);
            }
            if slots[id].replace(s).is_some() {
                return Err(TimelineError(format!("slot {} appears twice", id)));
            }
        }
        let mut roots = [None, None];
        for (id, s) in slots.iter().enumerate().filter_map(|(id, s)| s.as_ref().map(|s| (id, s))) {
            if s.depth == 0 {
                if s.parent.is_some() || roots[s.part].replace(id).is_some() {
                    return Err(TimelineError(format!("slot {}: a second root, or a root with a parent", id)));
                }
            } else {
                let parent = s.parent.and_then(|p| usize::try_from(p).ok()).and_then(|p| slots.get(p)).and_then(|p| p.as_ref());
                match parent {
                    Some(ps) if ps.part == s.part && ps.depth == s.depth - 1 => {}
                    _ => return Err(TimelineError(format!(
                        "slot {}: its parent_slot is not a slot of the same part one level up", id))),
                }
            }
        }
        let [Some(r0), Some(r1)] = roots else {
            return Err(TimelineError("the slot table lacks a root (depth 0) for each part".into()));
        };
        let mut order: Vec<usize> =
            (0..slots.len()).filter(|&id| slots[id].as_ref().is_some_and(|s| s.depth > 0)).collect();
        order.sort_by_key(|&id| {
            let s = slots[id].as_ref().expect("listed above");
            (s.depth, s.parent, s.sib, id)
        });
        Ok(Layout { slots, roots: [r0, r1], order })
    }

    pub fn slot(&self, id: i64) -> Option<&Slot> {
        usize::try_from(id).ok().and_then(|id| self.slots.get(id)).and_then(|s| s.as_ref())
    }

    fn at(&self, id: usize) -> &Slot {
        self.slots[id].as_ref().expect("a slot of the table")
    }
}

/// Working space of lay_out, reused io after io: per slot id, the io's span and its placement.
#[derive(Default)]
pub struct Scratch {
    raw: Vec<Option<Span>>,
    placed: Vec<Option<Placed>>,
}

/// One io's row: what its slices carry beyond their times.
#[derive(Clone, Debug, Default)]
pub struct Io {
    /// the earliest time any of its packets has (the order ios arrive in)
    pub start_ts: i64,
    pub n: i64,
    pub root_s: i64,
    pub root_e: Option<i64>,
    /// the track of each part (initiator, target) the slices are laid out on (the encoder then
    /// moves each part onto an io lane), the queue track each sits under, if any
    pub tracks: [i64; 2],
    pub queue_tracks: [Option<i64>; 2],
    /// flow ids: initiator -> target, target -> initiator
    pub flows: [i64; 2],
    pub category_iid: Option<i64>,
    pub io_id: Option<String>,
    pub size_bytes: Option<i64>,
    pub cid: Option<i64>,
    pub match_state: Option<String>,
}

/// A stage's span: its slot, from..to (ns) and own duration (None: unknown).
#[derive(Clone, Copy, Debug)]
pub struct Span {
    pub slot: i64,
    pub s: i64,
    pub e: i64,
    pub dur: Option<i64>,
}

/// A slice to draw: its begin and end packets' keys and what the begin says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Slice {
    pub key: Key,
    pub end_key: Key,
    /// a root: the descriptor of its track (under parent_uuid) comes first
    pub opens_track: bool,
    pub parent_uuid: Option<i64>,
    /// the number of the io lane it opens (1.. under its queue; 0: as laid out, none yet), the
    /// track's name
    pub lane: i64,
    pub name_iid: i64,
    pub category_iid: Option<i64>,
    pub flow_out: Option<i64>,
    pub flow_in: Option<i64>,
    pub io_id: Option<String>,
    pub size_bytes: Option<i64>,
    pub cid: Option<i64>,
    pub match_state: Option<String>,
    pub stage_dur_ns: Option<i64>,
}

/// A laid-out slot of the io: its drawn span and the stage's own duration.
#[derive(Clone, Copy)]
struct Placed {
    s: i64,
    e: i64,
    dur: Option<i64>,
}

/// Lays out one io's slices (see the module doc) and appends them to out. A span of a slot that
/// is not a stage of the table, or two spans of one slot, are errors.
pub fn lay_out(layout: &Layout, scratch: &mut Scratch, io: &Io, spans: &[Span], out: &mut Vec<Slice>)
               -> Result<(), TimelineError> {
    let n = layout.slots.len();
    let Scratch { raw, placed } = scratch;
    raw.clear();
    raw.resize(n, None);
    placed.clear();
    placed.resize(n, None);
    let (mut target_s, mut target_e) = (None::<i64>, None::<i64>);
    for sp in spans {
        let Some(slot) = layout.slot(sp.slot).filter(|s| s.depth > 0) else {
            return Err(TimelineError(format!("io {}: slot {} is not a stage slot of the slot table", io.n, sp.slot)));
        };
        if raw[sp.slot as usize].replace(*sp).is_some() {
            return Err(TimelineError(format!("io {}: slot {} has two spans", io.n, sp.slot)));
        }
        if slot.part == 1 {
            target_s = Some(target_s.map_or(sp.s, |t| t.min(sp.s)));
            target_e = Some(target_e.map_or(sp.e.max(sp.s), |t| t.max(sp.e.max(sp.s))));
        }
    }
    let root_e = io.root_e.unwrap_or(io.root_s).max(io.root_s);
    placed[layout.roots[0]] = Some(Placed { s: io.root_s, e: root_e, dur: None });
    if let (Some(s), Some(e)) = (target_s, target_e) {
        placed[layout.roots[1]] = Some(Placed { s, e, dur: None });
    }
    // slots in (depth, parent, sib) order: a parent is placed before its children, and the
    // siblings under one parent come in their order, each after the clamped ends of those before
    let mut after: Option<(i64, i64)> = None; // (parent, latest clamped end of the siblings so far)
    for &id in &layout.order {
        let slot = layout.at(id);
        let parent = slot.parent.expect("a non-root slot has a parent (Layout::new)");
        let (Some(sp), Some(p)) = (raw[id], placed[parent as usize]) else {
            continue;
        };
        let cs = sp.s.max(p.s).min(p.e);
        let ce = sp.e.max(sp.s).max(p.s).min(p.e);
        let fs = match after {
            Some((q, latest)) if q == parent => cs.max(latest),
            _ => cs,
        };
        after = Some((parent, match after {
            Some((q, latest)) if q == parent => latest.max(ce),
            _ => ce,
        }));
        placed[id] = Some(Placed { s: fs, e: ce.max(fs), dur: sp.dur });
    }
    let has_target = placed[layout.roots[1]].is_some();
    let marked = |flow| (0..n).any(|id| placed[id].is_some() && layout.at(id).flow == flow);
    let has_out = has_target && marked(FLOW_OUT);
    let has_back = has_target && marked(FLOW_BACK);
    let [out_flow, back_flow] = io.flows;
    for (id, pl) in placed.iter().enumerate().filter_map(|(id, p)| p.map(|p| (id, p))) {
        let slot = layout.at(id);
        if slot.depth > 0 && pl.dur.is_none() {
            continue;
        }
        let track = io.tracks[slot.part];
        let is_target_root = id == layout.roots[1];
        let is_initiator_root = id == layout.roots[0];
        let flow_out = if slot.flow == FLOW_OUT && has_out {
            Some(out_flow)
        } else if is_target_root && has_back {
            Some(back_flow)
        } else {
            None
        };
        let flow_in = if slot.flow == FLOW_BACK && has_back {
            Some(back_flow)
        } else if is_target_root && has_out {
            Some(out_flow)
        } else {
            None
        };
        out.push(Slice {
            key: (pl.s, track, slot.begin_pos),
            end_key: (pl.e, track, slot.end_pos),
            opens_track: slot.depth == 0,
            parent_uuid: if slot.depth == 0 { io.queue_tracks[slot.part] } else { None },
            lane: 0,
            name_iid: slot.name_iid,
            category_iid: io.category_iid,
            flow_out,
            flow_in,
            io_id: if slot.depth == 0 { io.io_id.clone() } else { None },
            size_bytes: if is_initiator_root { io.size_bytes } else { None },
            cid: if is_initiator_root { io.cid } else { None },
            match_state: if is_initiator_root { io.match_state.clone() } else { None },
            stage_dur_ns: pl.dur.filter(|d| *d != pl.e - pl.s),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROOT_END: i64 = 63 * 262144;

    fn slot(part: usize, parent: Option<i64>, depth: i64, sib: i64, flow: i64, name_iid: i64) -> Slot {
        let unit = [262144, 262144, 4096, 64][depth as usize];
        let begin_pos = if depth == 0 { 0 } else { sib * unit };
        let end_pos = if depth == 0 { ROOT_END } else { begin_pos + 63 * unit / 64 };
        Slot { part, parent, depth, sib, begin_pos, end_pos, flow, name_iid }
    }

    /// roots 1 (initiator) and 2 (target); A (3, out) and B (4, back) under the initiator root,
    /// A1 (5) and A2 (6) under A; T (7) under the target root. Name iid = slot + 10.
    fn layout() -> Layout {
        Layout::new(vec![
            (1, slot(0, None, 0, 1, FLOW_NONE, 11)),
            (2, slot(1, None, 0, 1, FLOW_NONE, 12)),
            (3, slot(0, Some(1), 1, 1, FLOW_OUT, 13)),
            (4, slot(0, Some(1), 1, 2, FLOW_BACK, 14)),
            (5, slot(0, Some(3), 2, 1, FLOW_NONE, 15)),
            (6, slot(0, Some(3), 2, 2, FLOW_NONE, 16)),
            (7, slot(1, Some(2), 1, 1, FLOW_NONE, 17)),
        ])
        .unwrap()
    }

    fn io(root_s: i64, root_e: i64) -> Io {
        Io {
            start_ts: root_s,
            n: 1,
            root_s,
            root_e: Some(root_e),
            tracks: [40, 41],
            queue_tracks: [Some(7), None],
            flows: [1, 2],
            category_iid: Some(3),
            io_id: Some("initiator/0/1/8/100".into()),
            size_bytes: Some(4096),
            cid: Some(8),
            match_state: Some("matched".into()),
        }
    }

    fn span(slot: i64, s: i64, e: i64, dur: Option<i64>) -> Span {
        Span { slot, s, e, dur }
    }

    /// name iid -> (ts, end, stage_dur_ns, flow_out, flow_in) of the laid-out slices
    fn drawn(io: &Io, spans: &[Span]) -> std::collections::BTreeMap<i64, (i64, i64, Option<i64>, Option<i64>, Option<i64>)> {
        let mut out = Vec::new();
        lay_out(&layout(), &mut Scratch::default(), io, spans, &mut out).unwrap();
        out.iter().map(|s| (s.name_iid, (s.key.0, s.end_key.0, s.stage_dur_ns, s.flow_out, s.flow_in))).collect()
    }

    #[test]
    fn nested_spans_are_drawn_as_they_are_with_flows_both_ways() {
        let io = io(100, 200);
        let spans = [span(3, 100, 150, Some(50)), span(4, 150, 200, Some(50)), span(5, 100, 120, Some(20)),
                     span(6, 120, 150, Some(30)), span(7, 130, 140, Some(10))];
        let d = drawn(&io, &spans);
        assert_eq!(d[&11], (100, 200, None, None, None));
        assert_eq!(d[&13], (100, 150, None, Some(1), None));
        assert_eq!(d[&14], (150, 200, None, None, Some(2)));
        assert_eq!(d[&15], (100, 120, None, None, None));
        assert_eq!(d[&16], (120, 150, None, None, None));
        assert_eq!(d[&12], (130, 140, None, Some(2), Some(1)));
        assert_eq!(d[&17], (130, 140, None, None, None));
        let mut out = Vec::new();
        lay_out(&layout(), &mut Scratch::default(), &io, &spans, &mut out).unwrap();
        let roots: Vec<&Slice> = out.iter().filter(|s| s.opens_track).collect();
        assert_eq!(roots.len(), 2);
        let init = out.iter().find(|s| s.name_iid == 11).unwrap();
        assert_eq!((init.key, init.end_key), ((100, 40, 0), (200, 40, ROOT_END)));
        assert_eq!((init.parent_uuid, init.io_id.as_deref(), init.size_bytes, init.cid, init.match_state.as_deref()),
                   (Some(7), Some("initiator/0/1/8/100"), Some(4096), Some(8), Some("matched")));
        let target = out.iter().find(|s| s.name_iid == 12).unwrap();
        assert_eq!((target.key.1, target.parent_uuid, target.io_id.as_deref(), target.size_bytes, target.match_state.as_deref()),
                   (41, None, Some("initiator/0/1/8/100"), None, None));
        let a1 = out.iter().find(|s| s.name_iid == 15).unwrap();
        assert_eq!((a1.key, a1.end_key, a1.opens_track, a1.io_id.as_deref(), a1.category_iid),
                   ((100, 40, 262144 / 64), (120, 40, 262144 / 64 + 63 * 4096 / 64), false, None, Some(3)));
    }

    #[test]
    fn a_child_is_clamped_into_its_parent_and_after_its_earlier_siblings() {
        // A starts before the root, B overlaps A, A1 starts before A, A2 overlaps A1 and ends after A
        let spans = [span(3, 90, 160, Some(70)), span(4, 150, 210, Some(60)), span(5, 95, 110, Some(15)),
                     span(6, 105, 170, Some(65))];
        let d = drawn(&io(100, 200), &spans);
        assert_eq!(d[&13], (100, 160, Some(70), None, None));   // no target part: no flows
        assert_eq!(d[&14], (160, 200, Some(60), None, None));   // after A's end, cut at the root's
        assert_eq!(d[&15], (100, 110, Some(15), None, None));
        assert_eq!(d[&16], (110, 160, Some(65), None, None));   // after A1's end, cut at A's
        assert!(!d.contains_key(&12) && !d.contains_key(&17));
    }

    #[test]
    fn a_stage_of_unknown_duration_moves_its_siblings_but_is_not_drawn() {
        let spans = [span(3, 100, 150, None), span(4, 140, 200, Some(60)), span(5, 100, 120, Some(20))];
        let d = drawn(&io(100, 200), &spans);
        assert!(!d.contains_key(&13));
        assert_eq!(d[&14], (150, 200, Some(60), None, None));
        assert_eq!(d[&15], (100, 120, None, None, None));
    }

    #[test]
    fn a_stage_whose_parent_is_missing_is_not_drawn_and_the_target_root_spans_its_stages() {
        // A2 has no A to nest in; the target root covers T, the initiator root ends at its start
        let mut one = io(100, 200);
        one.root_e = None;
        let spans = [span(6, 120, 150, Some(30)), span(7, 130, 250, Some(120))];
        let d = drawn(&one, &spans);
        assert_eq!(d[&11], (100, 100, None, None, None));
        assert!(!d.contains_key(&16));
        assert_eq!(d[&12], (130, 250, None, None, None));       // no slice hands over: no flows
        assert_eq!(d[&17], (130, 250, None, None, None));
    }

    #[test]
    fn inconsistent_slot_tables_and_spans_are_refused() {
        let no_target_root = Layout::new(vec![(1, slot(0, None, 0, 1, FLOW_NONE, 11))]);
        assert!(no_target_root.is_err());
        let cross_part = Layout::new(vec![
            (1, slot(0, None, 0, 1, FLOW_NONE, 11)),
            (2, slot(1, None, 0, 1, FLOW_NONE, 12)),
            (3, slot(1, Some(1), 1, 1, FLOW_NONE, 13)),
        ]);
        assert!(cross_part.err().unwrap().0.contains("slot 3"));
        let mut out = Vec::new();
        let e = lay_out(&layout(), &mut Scratch::default(), &io(100, 200), &[span(9, 100, 110, Some(10))], &mut out).unwrap_err();
        assert!(e.0.contains("slot 9"), "{}", e.0);
        let e = lay_out(&layout(), &mut Scratch::default(), &io(100, 200), &[span(3, 100, 110, Some(10)), span(3, 100, 110, Some(10))], &mut out)
            .unwrap_err();
        assert!(e.0.contains("two spans"), "{}", e.0);
    }
}
