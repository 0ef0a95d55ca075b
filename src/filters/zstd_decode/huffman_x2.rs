//! Huffman-coded literals (RFC 8878 §4.2.2) decoded up to two symbols per
//! table lookup: a table indexed, as the single-symbol one, by the next 11
//! bits of a stream, whose cells hold every whole code those bits begin
//! with (one or two), and the 4-stream loop over it.
//!
//! Whether it pays depends on the section: with short codes most cells hold
//! two symbols and the loop does fewer lookups; with codes near 8 bits most
//! cells hold one. [`worth_it`] decides from the section's sizes, as
//! libzstd chooses between its single- and double-symbol decoders.
//!
//! The 4-stream loop is x86-64 assembly (with BMI1/BMI2): in Rust the four
//! window pointers, four bit registers, four output pointers and the table
//! do not fit the registers LLVM leaves, and the spills cost more than the
//! second symbol saves. Only the bulk of a section runs here: the loops stop
//! while every stream is still far from its start and from the end of its
//! output segment, and the single-symbol decoder finishes each stream and
//! checks its end, so the output and the errors are those of decoding one
//! symbol at a time.

use super::bits::BackBits;
#[cfg(target_arch = "x86_64")]
use super::huffman_table::{load, windows};
use super::huffman_table::{MAX_BITS, TABLE_SIZE};

/// Double-symbol cells, one per value of the next 11 bits: the first
/// symbol in bits 0–7, the second in 8–15 (zero when the cell holds one),
/// the bits the cell's codes take in 16–23 and the symbol count (1 or 2)
/// in 24–31. A lookup stores bits 0–15 as two output bytes and moves on by
/// the count: a second byte that is not a symbol is overwritten next.
pub(crate) struct X2Table {
    /// Empty until the first build (most sections never need it), then
    /// `TABLE_SIZE` cells.
    cells: Vec<u32>,
    /// Scratch for [`X2Table::build`]: for each first-code length `l`, at
    /// `2^(11 - l)`, what follows a code of that length (see `build`).
    follow: Vec<u32>,
    /// Built from the current single-symbol table.
    pub(crate) valid: bool,
}

/// Fewest literals in a section decoded with the double-symbol table: below
/// this the table's 2,048 cells cost more to build than the lookups save.
/// Fuzz builds (`cfg(fuzzing)`, set by cargo-fuzz) take it for sections of
/// 64, so that inputs of a few kilobytes reach the assembly loop.
const MIN_LITERALS: usize = if cfg!(fuzzing) { 64 } else { 4096 };

/// Whether a 4-stream section of `csize` bytes holding `regen` literals
/// decodes faster with the double-symbol table: under 6.5 bits per literal
/// on average (with longer codes most cells hold one and the double-symbol
/// loop's extra work per lookup is not repaid; libzstd's cost table
/// crosses over between 6.5 and 7) and enough literals.
pub(crate) fn worth_it(csize: usize, regen: usize) -> bool {
    regen >= MIN_LITERALS && csize.saturating_mul(16) < regen.saturating_mul(13)
}

impl X2Table {
    pub(crate) fn new() -> Self {
        X2Table {
            cells: Vec::new(),
            follow: Vec::new(),
            valid: false,
        }
    }

    /// Build from a complete single-symbol table (`symbol << 8 | code
    /// length` per cell, indexed by the next 11 bits; each symbol's cells
    /// one run of `2^(11 - length)`). Returns false, leaving the table
    /// invalid, if `x1` is not such a table.
    ///
    /// In the run of a first code of length `l1`, cell `start + j` has `j`
    /// as the next `11 - l1` bits, with `l1` unknown bits below: the second
    /// code is whole in the cell when its length is at most `11 - l1`, and
    /// then the single-symbol cell `j << l1` names it (a prefix code). What
    /// follows depends on `l1` and `j` only, so it is worked out once per
    /// length present (`follow`), and each run is the first symbol added to
    /// it: 2,048 adds in runs, where a lookup per cell cost a dependent load
    /// and a branch each.
    pub(crate) fn build(&mut self, x1: &[u16; TABLE_SIZE]) -> bool {
        self.valid = false;
        if self.cells.len() != TABLE_SIZE {
            self.cells = vec![0; TABLE_SIZE];
            self.follow = vec![0; TABLE_SIZE];
        }
        let mut have = 0u32;
        let mut i = 0usize;
        while i < TABLE_SIZE {
            let v1 = x1[i];
            let l1 = u32::from(v1 & 0xFF);
            if l1 == 0 || l1 > MAX_BITS {
                return false;
            }
            let n = 1usize << (MAX_BITS - l1);
            let (Some(run), Some(fol)) =
                (self.cells.get_mut(i..i + n), self.follow.get_mut(n..2 * n))
            else {
                return false;
            };
            if have & (1 << l1) == 0 {
                have |= 1 << l1;
                for (j, f) in fol.iter_mut().enumerate() {
                    let v2 = x1[(j << l1) & (TABLE_SIZE - 1)];
                    let l2 = u32::from(v2 & 0xFF);
                    *f = if l1 + l2 <= MAX_BITS {
                        u32::from(v2 & 0xFF00) | l2 << 16 | 1 << 24
                    } else {
                        0
                    };
                }
            }
            let first = u32::from(v1 >> 8) | l1 << 16 | 1 << 24;
            for (c, &f) in run.iter_mut().zip(fol.iter()) {
                *c = first + f;
            }
            i += n;
        }
        self.valid = true;
        true
    }

    /// The bulk of a 4-stream decode: `out` holds four segments of `seg`
    /// bytes, the last shorter; stream `k` starts at `starts[k]` in `body`
    /// and its reader is positioned inside it. Returns the symbols decoded
    /// per stream and leaves each reader after its stream's; `[0; 4]` when
    /// the loop cannot run here.
    pub(crate) fn decode_4_fast(
        &self,
        body: &[u8],
        starts: [usize; 4],
        readers: [&mut BackBits; 4],
        out: &mut [u8],
        seg: usize,
    ) -> [usize; 4] {
        #[cfg(target_arch = "x86_64")]
        if super::use_bmi2() {
            return self.decode_4_asm(body, starts, readers, out, seg);
        }
        let _ = (body, starts, readers, out, seg);
        [0; 4]
    }

    /// [`X2Table::decode_4_fast`] on x86-64 with BMI1/BMI2 (checked by the
    /// caller): rounds of [`asm_rounds`] between which the bounds are worked
    /// out again.
    ///
    /// A round refills each stream once and does 5 lookups per stream: the
    /// refill steps a window back at most 8 bytes, and the lookups store at
    /// most 10 bytes past a stream's output pointer. Before each call, with
    /// `p_k` the window of stream `k`, `o_k` its output pointer and `e_k`
    /// the end of its segment, the rounds allowed are the least of
    /// `(p_k - start_k) / 8` and `(e_k - o_k) / 10` over the streams still
    /// in the loop. The assembly stops when slot 3's output pointer
    /// reaches its value at the call plus 5 per round allowed; every round
    /// moves it at least 5 on, so it does no more rounds than allowed. A
    /// stream whose bound is 0 leaves the loop for the single-symbol tail.
    #[cfg(target_arch = "x86_64")]
    fn decode_4_asm(
        &self,
        body: &[u8],
        starts: [usize; 4],
        readers: [&mut BackBits; 4],
        out: &mut [u8],
        seg: usize,
    ) -> [usize; 4] {
        let Some(lim) = body.len().checked_sub(8) else {
            return [0; 4];
        };
        // The assembly indexes `TABLE_SIZE` cells.
        if !self.valid || self.cells.len() != TABLE_SIZE {
            return [0; 4];
        }
        if seg.checked_mul(3).is_none_or(|s| s > out.len()) {
            return [0; 4];
        }
        // Segment k is out[k * seg .. ends[k]].
        let ends = [seg, 2 * seg, 3 * seg, out.len()];
        let Some((pos, used)) = windows(&readers, starts, lim) else {
            return [0; 4];
        };
        let base = body.as_ptr();
        let q0 = out.as_mut_ptr();
        // Windows and outputs as offsets; the assembly works on pointers
        // made from them.
        let mut p_off = pos;
        let mut o_off = [0, seg, 2 * seg, 3 * seg];
        let mut bits = [0u64; 4];
        for k in 0..4 {
            bits[k] = (load(body, pos[k]) | 1) << used[k];
        }
        // A stream near its end leaves the loop, and its slot decodes
        // zeros from `idle_in` into `idle_out` (thrown away) while the
        // others go on: four slots keep four independent lookups in
        // flight, where a stream on its own waits on each lookup's load.
        let mut live = [true; 4];
        let idle_in = [0u8; IDLE_IN];
        let mut idle_out = [0u8; IDLE_OUT];
        loop {
            let mut rounds = usize::MAX;
            for k in 0..4 {
                if live[k] {
                    let r = ((p_off[k] - starts[k]) / 8).min((ends[k] - o_off[k]) / 10);
                    if r == 0 {
                        live[k] = false;
                    } else {
                        rounds = rounds.min(r);
                    }
                }
            }
            if live == [false; 4] {
                break;
            }
            if live.contains(&false) {
                rounds = rounds.min(IDLE_ROUNDS);
            }
            let mut args = AsmArgs {
                ip: [std::ptr::null(); 4],
                op: [std::ptr::null_mut(); 4],
                bits,
                dt: self.cells.as_ptr(),
                olimit: std::ptr::null(),
            };
            for k in 0..4 {
                if live[k] {
                    // SAFETY: p_off[k] <= lim < body.len() and o_off[k] <=
                    // ends[k] <= out.len().
                    args.ip[k] = unsafe { base.add(p_off[k]) };
                    // SAFETY: o_off[k] <= ends[k] <= out.len() (as above), so
                    // the pointer stays in `out` or one past its end.
                    args.op[k] = unsafe { q0.add(o_off[k]) };
                } else {
                    // SAFETY: IDLE_IN - 8 < IDLE_IN.
                    args.ip[k] = unsafe { idle_in.as_ptr().add(IDLE_IN - 8) };
                    args.op[k] = idle_out.as_mut_ptr();
                    args.bits[k] = 1;
                }
            }
            // Never dereferenced.
            args.olimit = args.op[3].wrapping_add(5 * rounds).cast_const();
            // SAFETY: BMI1/BMI2 are present (checked by the caller). At
            // most `rounds` rounds run (see the doc comment). Each reads,
            // per slot, the 8 bytes at its window stepped back by at most
            // 8: a live stream's stays at or above its start (inside
            // `body`), an idle slot's inside `idle_in` (IDLE_ROUNDS * 8 <=
            // IDLE_IN - 8). It looks up cells by an 11-bit index (2,048
            // cells), and stores 2 bytes at most 8 past each slot's output
            // pointer, at most 10 short of its segment's end (or of
            // `idle_out`'s: IDLE_ROUNDS * 10 <= IDLE_OUT) at the round's
            // start.
            unsafe { asm_rounds(&mut args) };
            for k in 0..4 {
                if live[k] {
                    p_off[k] = (args.ip[k] as usize).wrapping_sub(base as usize);
                    o_off[k] = (args.op[k] as usize).wrapping_sub(q0 as usize);
                    bits[k] = args.bits[k];
                    // What the bounds above promise (tests and fuzzing run
                    // with debug assertions; the sanitizers do not see
                    // inside the assembly).
                    debug_assert!(p_off[k] >= starts[k] && p_off[k] <= lim);
                    debug_assert!(o_off[k] >= k * seg && o_off[k] <= ends[k]);
                }
            }
        }
        let mut done = [0usize; 4];
        for k in 0..4 {
            done[k] = o_off[k] - k * seg;
            if done[k] > 0 {
                readers[k].set_position(p_off[k] - starts[k], bits[k].trailing_zeros());
            }
        }
        done
    }
}

/// Rounds per call while a slot is idle, and the idle slot's buffers: a
/// round steps its window back at most 8 bytes from `IDLE_IN - 8` and
/// moves its output at most 10 on.
#[cfg(target_arch = "x86_64")]
const IDLE_ROUNDS: usize = 60;
#[cfg(target_arch = "x86_64")]
const IDLE_IN: usize = IDLE_ROUNDS * 8 + 8;
#[cfg(target_arch = "x86_64")]
const IDLE_OUT: usize = IDLE_ROUNDS * 10;

/// The state the assembly loop reads and writes back (layout fixed: the
/// assembly addresses the fields by offset).
#[cfg(target_arch = "x86_64")]
#[repr(C)]
struct AsmArgs {
    /// Window of each stream (offset 0).
    ip: [*const u8; 4],
    /// Output pointer of each stream (offset 32).
    op: [*mut u8; 4],
    /// Bit register of each stream, marker bit below the bits (offset 64).
    bits: [u64; 4],
    /// The cells (offset 96).
    dt: *const u32,
    /// Stream 3's output pointer at which the rounds stop (offset 104).
    olimit: *const u8,
}

/// Rounds of the 4-stream double-symbol loop: per round, refill each stream
/// (step its window back over the whole bytes consumed, reload 8 bytes,
/// realign under a marker bit), then 5 lookups per stream, interleaved;
/// until slot 3's output pointer reaches `olimit` (at least one round).
/// Registers: windows r8–r11, outputs rsi, rdi, rbx, rcx, bits rbp, rdx,
/// r12, r13, table r14, scratch rax, r15; rbx and rbp are saved on the
/// stack (inline assembly may not name them), and `olimit` is kept there.
///
/// # Safety
///
/// BMI1 and BMI2 must be present, and every round the loop runs must stay
/// inside the memory `args` points into (see [`X2Table::decode_4_asm`]).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "bmi1,bmi2")]
unsafe fn asm_rounds(args: &mut AsmArgs) {
    // SAFETY: the caller's contract (BMI1/BMI2 present, every round's reads
    // and writes inside the memory `args` points into) covers the loop's
    // accesses; the block restores rbx, rbp and rsp.
    unsafe {
        std::arch::asm!(
            "push rbp",
            "push rbx",
            "push rax",
            "push qword ptr [rax + 104]",
            "mov r8, [rax]",
            "mov r9, [rax + 8]",
            "mov r10, [rax + 16]",
            "mov r11, [rax + 24]",
            "mov rsi, [rax + 32]",
            "mov rdi, [rax + 40]",
            "mov rbx, [rax + 48]",
            "mov rcx, [rax + 56]",
            "mov rbp, [rax + 64]",
            "mov rdx, [rax + 72]",
            "mov r12, [rax + 80]",
            "mov r13, [rax + 88]",
            "mov r14, [rax + 96]",
            ".p2align 4",
            "2:",
            // Refill: rax = bits consumed, r15 = the part within a byte.
            "tzcnt rax, rbp", "mov r15d, eax", "shr eax, 3", "and r15d, 7",
            "sub r8, rax", "mov rbp, [r8]", "or rbp, 1", "shlx rbp, rbp, r15",
            "tzcnt rax, rdx", "mov r15d, eax", "shr eax, 3", "and r15d, 7",
            "sub r9, rax", "mov rdx, [r9]", "or rdx, 1", "shlx rdx, rdx, r15",
            "tzcnt rax, r12", "mov r15d, eax", "shr eax, 3", "and r15d, 7",
            "sub r10, rax", "mov r12, [r10]", "or r12, 1", "shlx r12, r12, r15",
            "tzcnt rax, r13", "mov r15d, eax", "shr eax, 3", "and r15d, 7",
            "sub r11, rax", "mov r13, [r11]", "or r13, 1", "shlx r13, r13, r15",
            // 5 lookups per stream: index = top 11 bits; the cell's bytes
            // are three loads (the symbols as a 2-byte store, the bit count
            // for the shift, the symbol count for the output pointer), as
            // libzstd's loop does: one 4-byte load and a shift for the
            // count cost 6 % of a zstd_3_shuffle pass (an ALU operation
            // more per lookup, where loads have ports to spare).
            ".rept 5",
            "mov rax, rbp", "shr rax, 53", "movzx r15d, byte ptr [r14 + rax*4 + 2]",
            "shlx rbp, rbp, r15", "movzx r15d, word ptr [r14 + rax*4]", "mov [rsi], r15w",
            "movzx eax, byte ptr [r14 + rax*4 + 3]", "add rsi, rax",
            "mov rax, rdx", "shr rax, 53", "movzx r15d, byte ptr [r14 + rax*4 + 2]",
            "shlx rdx, rdx, r15", "movzx r15d, word ptr [r14 + rax*4]", "mov [rdi], r15w",
            "movzx eax, byte ptr [r14 + rax*4 + 3]", "add rdi, rax",
            "mov rax, r12", "shr rax, 53", "movzx r15d, byte ptr [r14 + rax*4 + 2]",
            "shlx r12, r12, r15", "movzx r15d, word ptr [r14 + rax*4]", "mov [rbx], r15w",
            "movzx eax, byte ptr [r14 + rax*4 + 3]", "add rbx, rax",
            "mov rax, r13", "shr rax, 53", "movzx r15d, byte ptr [r14 + rax*4 + 2]",
            "shlx r13, r13, r15", "movzx r15d, word ptr [r14 + rax*4]", "mov [rcx], r15w",
            "movzx eax, byte ptr [r14 + rax*4 + 3]", "add rcx, rax",
            ".endr",
            "cmp rcx, [rsp]",
            "jb 2b",
            "add rsp, 8",
            "pop rax",
            "mov [rax], r8",
            "mov [rax + 8], r9",
            "mov [rax + 16], r10",
            "mov [rax + 24], r11",
            "mov [rax + 32], rsi",
            "mov [rax + 40], rdi",
            "mov [rax + 48], rbx",
            "mov [rax + 56], rcx",
            "mov [rax + 64], rbp",
            "mov [rax + 72], rdx",
            "mov [rax + 80], r12",
            "mov [rax + 88], r13",
            "pop rbx",
            "pop rbp",
            inout("rax") std::ptr::from_mut(args) => _,
            out("rcx") _, out("rdx") _, out("rsi") _, out("rdi") _,
            out("r8") _, out("r9") _, out("r10") _, out("r11") _,
            out("r12") _, out("r13") _, out("r14") _, out("r15") _,
        );
    }
}

#[cfg(test)]
impl X2Table {
    /// The cells, for tests.
    pub(crate) fn cells(&self) -> &[u32] {
        &self.cells
    }

    /// The definition [`X2Table::build`] is checked against: per cell, the
    /// first code's single-symbol cell, then the single-symbol cell of the
    /// bits after it, kept when that code is whole in the 11 bits.
    pub(crate) fn reference(x1: &[u16; TABLE_SIZE]) -> Vec<u32> {
        (0..TABLE_SIZE)
            .map(|i| {
                let v1 = x1[i];
                let l1 = u32::from(v1 & 0xFF);
                let v2 = x1[(i << l1) & (TABLE_SIZE - 1)];
                let l2 = u32::from(v2 & 0xFF);
                let s1 = u32::from(v1 >> 8);
                if l1 + l2 <= MAX_BITS {
                    s1 | u32::from(v2 >> 8) << 8 | (l1 + l2) << 16 | 2 << 24
                } else {
                    s1 | l1 << 16 | 1 << 24
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn incomplete_single_symbol_table_is_refused() {
        let mut x2 = X2Table::new();
        assert!(!x2.build(&[0u16; TABLE_SIZE]));
        assert!(!x2.valid);
        let mut x1 = [0x0101u16; TABLE_SIZE];
        x1[TABLE_SIZE / 2] = 0x0112; // the second run starts with length 18: not a code
        assert!(!x2.build(&x1));
    }
}
