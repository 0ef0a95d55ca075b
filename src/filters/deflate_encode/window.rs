//! The sliding window's geometry, zlib's deflate.c constants shared by the
//! LZ77 parse ([`super::lz`]) and its match search ([`super::search`]).

/// Half the window: matches reach back at most this far.
pub(super) const WSIZE: usize = 1 << 15;
/// Mask of a position within [`WSIZE`].
pub(super) const WMASK: usize = WSIZE - 1;
/// The whole window (it slides by [`WSIZE`]).
pub(super) const WINDOW_SIZE: usize = 2 * WSIZE;
/// Shortest match.
pub(super) const MIN_MATCH: usize = 3;
/// Longest match.
pub(super) const MAX_MATCH: usize = 258;
/// Lookahead kept before each step: a longest match plus the next 3-byte string.
pub(super) const MIN_LOOKAHEAD: usize = MAX_MATCH + MIN_MATCH + 1;
/// Farthest match distance.
pub(super) const MAX_DIST: usize = WSIZE - MIN_LOOKAHEAD;
/// Slack after the window: the match compare's 8-byte loads, and indices
/// below 2^16 + 512 need no bounds check.
pub(super) const PAD: usize = 512;

/// The window buffer, with its slack.
pub(super) type Window = [u8; WINDOW_SIZE + PAD];
