//! CPU features, asked in one place by every kernel of the crate (shuffle,
//! bitshuffle, LZ4 inside Blosc2, the Zstandard decoder's hot loops). The
//! answers come from std's run-time detection, which probes the CPU once per
//! process and caches the result; each function here is a load and a bit test.
//!
//! Tests reach the portable paths through one override, [`force`]: with
//! [`Force::Portable`] every function answers `false`, with [`Force::NoGfni`]
//! only [`gfni`] does (so the AVX2 kernels without GFNI run too). The override
//! is per thread and exists only in test builds.

/// What the test override forces off.
#[cfg(test)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Force {
    /// Nothing: the CPU's own answers.
    Nothing,
    /// GFNI only.
    NoGfni,
    /// Every feature: the portable paths.
    Portable,
}

#[cfg(test)]
thread_local! {
    static FORCED: std::cell::Cell<Force> = const { std::cell::Cell::new(Force::Nothing) };
}

/// Force features off on this thread (tests only); `Force::Nothing` undoes it.
#[cfg(test)]
pub(crate) fn force(f: Force) {
    FORCED.with(|c| c.set(f));
}

#[cfg(test)]
#[inline(always)]
fn forced(level: Force) -> bool {
    FORCED.with(|c| {
        let f = c.get();
        f == Force::Portable || (f == level && f != Force::Nothing)
    })
}

#[cfg(not(test))]
#[inline(always)]
fn forced(_: ()) -> bool {
    false
}

#[cfg(test)]
const ANY: Force = Force::Portable;
#[cfg(not(test))]
const ANY: () = ();
#[cfg(test)]
const GFNI: Force = Force::NoGfni;
#[cfg(not(test))]
const GFNI: () = ();

/// AVX2 (256-bit integer vectors).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) fn avx2() -> bool {
    !forced(ANY) && std::arch::is_x86_feature_detected!("avx2")
}

/// SSSE3 (byte shuffles in 128-bit vectors).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) fn ssse3() -> bool {
    !forced(ANY) && std::arch::is_x86_feature_detected!("ssse3")
}

/// GFNI (Galois-field affine transforms: 8x8 bit-matrix transposes).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) fn gfni() -> bool {
    !forced(GFNI) && std::arch::is_x86_feature_detected!("gfni")
}

/// BMI1, BMI2 and LZCNT together (variable shifts without `cl`, `tzcnt`).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) fn bmi2() -> bool {
    !forced(ANY)
        && std::arch::is_x86_feature_detected!("bmi1")
        && std::arch::is_x86_feature_detected!("bmi2")
        && std::arch::is_x86_feature_detected!("lzcnt")
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::*;

    #[test]
    fn the_override_turns_features_off_and_back() {
        let (a, g) = (avx2(), gfni());
        force(Force::NoGfni);
        assert!(!gfni());
        assert_eq!(avx2(), a);
        force(Force::Portable);
        assert!(!avx2() && !ssse3() && !gfni() && !bmi2());
        force(Force::Nothing);
        assert_eq!((avx2(), gfni()), (a, g));
    }
}
