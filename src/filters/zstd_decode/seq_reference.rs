//! Test reference for the sequence loop of RFC 8878 §3.1.1.3.2.2 and
//! §3.1.1.4: the interleaved decode-and-execute loop the batched
//! [`super::sequences`] loop replaced (zdec5), kept so property tests can
//! compare the two on any input (same output, same errors).

use super::bits::BackBits;
use super::execute::Target;
use super::execute::{copy_match, long_runs, wild_sequence, WILD};
use super::sequences::SeqState;
use super::{corrupt, Result};

#[allow(clippy::too_many_arguments)]
pub(crate) fn execute_interleaved(
    stream: &[u8],
    st: &mut SeqState,
    nb_seq: usize,
    lits: &[u8],
    lit_len: usize,
    t: &mut Target,
    offset: usize,
) -> Result<()> {
    let mut r = BackBits::new(stream, offset)?;
    let (ll_t, of_t, ml_t) = (&*st.ll.cells, &*st.of.cells, &*st.ml.cells);
    let mut ll_s = r.read(st.ll.log) as usize;
    let mut of_s = r.read(st.of.log) as usize;
    let mut ml_s = r.read(st.ml.log) as usize;
    let [mut r0, mut r1, mut r2] = st.rep;
    let mut lit_pos = 0usize;
    let mut pos = t.pos;
    let limit = t.limit;
    let frame_start = t.frame_start;
    let buf = &mut *t.buf;
    // A sequence end / literal end below these leaves WILD bytes of room
    // (`x < len + 1 - WILD` is `x + WILD <= len`; 0 when len < WILD, which no
    // end is below).
    let wild_out = (buf.len() + 1).saturating_sub(WILD);
    let wild_lits = (lits.len() + 1).saturating_sub(WILD);
    let long = long_runs(limit.saturating_sub(pos), nb_seq);
    // Extra bits a sequence may read after one refill (56 bits) and still leave
    // room for the three state updates (at most each table's accuracy log).
    let extra_budget = 56u32.saturating_sub(st.ll.log + st.of.log + st.ml.log);
    // One sequence (index `$i`); `$update` reads the next states (all but
    // the last sequence), so the loop below has no per-sequence test for it.
    macro_rules! sequence {
        ($i:expr, $update:expr) => {{
            let i: usize = $i;
            r.refill_always();
            let of = of_t[of_s & 511];
            let ll = ll_t[ll_s & 511];
            let ml = ml_t[ml_s & 511];
            // One refill leaves >= 56 bits: the offset (<= 31) and match length
            // (<= 16) extras always fit; a second refill is needed only when all
            // three extras and the state updates together could exceed 56 bits.
            let off_val = of.base + r.read(u32::from(of.extra)) as u32;
            let ml_v = (ml.base + r.read(u32::from(ml.extra)) as u32) as usize;
            if u32::from(of.extra) + u32::from(ml.extra) + u32::from(ll.extra) > extra_budget {
                r.refill_always();
            }
            let ll_v = (ll.base + r.read(u32::from(ll.extra)) as u32) as usize;
            // (The last sequence's copy never reads the states after it.)
            #[allow(unused_assignments)]
            if $update {
                ll_s = usize::from(ll.next) + r.read(u32::from(ll.nb_bits)) as usize;
                ml_s = usize::from(ml.next) + r.read(u32::from(ml.nb_bits)) as usize;
                of_s = usize::from(of.next) + r.read(u32::from(of.nb_bits)) as usize;
            }
            // Repeat offsets (RFC 8878 §3.1.1.5), kept in three registers.
            let dist = if off_val > 3 {
                r2 = r1;
                r1 = r0;
                r0 = off_val - 3;
                r0
            } else {
                match off_val - 1 + u32::from(ll_v == 0) {
                    0 => r0,
                    1 => {
                        std::mem::swap(&mut r0, &mut r1);
                        r0
                    }
                    2 => {
                        let o = r2;
                        r2 = r1;
                        r1 = r0;
                        r0 = o;
                        o
                    }
                    _ => {
                        let o = r0.wrapping_sub(1);
                        r2 = r1;
                        r1 = r0;
                        r0 = o;
                        o
                    }
                }
            } as usize;
            let lit_end = lit_pos + ll_v;
            if lit_end > lit_len {
                return Err(corrupt(
                    offset,
                    format!("sequence {i} uses more literals than decoded"),
                ));
            }
            let end = pos + ll_v + ml_v;
            if end > limit {
                return Err(corrupt(
                    offset,
                    format!("sequence {i} writes past the block maximum"),
                ));
            }
            let m_pos = pos + ll_v;
            if dist == 0 || dist > m_pos - frame_start {
                return Err(corrupt(
                    offset,
                    format!("sequence {i}: offset {dist} reaches before the frame"),
                ));
            }
            if end < wild_out && lit_end < wild_lits {
                // SAFETY: checked just above: the sequence's literal reads lie in
                // lits[lit_pos..lit_end + WILD] and its writes in buf[pos..end + WILD]
                // (wild_sequence's contract), both inside their slices; the match
                // source starts at m_pos - dist >= frame_start.
                unsafe { wild_sequence(buf, pos, lits, lit_pos, ll_v, dist, ml_v, long) };
            } else {
                buf[pos..m_pos].copy_from_slice(&lits[lit_pos..lit_end]);
                copy_match(buf, m_pos, dist, ml_v);
            }
            lit_pos = lit_end;
            pos = end;
        }};
    }
    if nb_seq > 0 {
        for i in 0..nb_seq - 1 {
            sequence!(i, true);
        }
        sequence!(nb_seq - 1, false);
    }
    r.refill();
    if !r.finished() {
        return Err(corrupt(offset, "sequence bitstream not consumed exactly"));
    }
    st.rep = [r0, r1, r2];
    t.pos = pos;
    super::execute::copy_literals(t, lits, lit_pos, lit_len, offset)
}
