//! The CSR text triplet `<prefix>RowPtr.txt`, `<prefix>ColInd.txt`, `<prefix>Values.txt`.
//!
//! The reader follows the original's token rules and reports the first error in the original's check
//! order (spec 1.4), naming path, line and column; the writer produces the original's exact bytes.
//! The small lexer shared by every text reader of `io` lives here too (`lex`).

use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::io::CsrText;
use crate::graph::{csr::ColumnFacts, Csr, Graph};
use crate::error::{Error, Result};

/// Byte-level helpers shared by the text readers: token splitting, integer parsing and positions.
pub(crate) mod lex {
    use std::path::Path;

    use crate::error::{Error, Result};

    /// Blanks inside a line: space, tab and CR (so CRLF files read like LF files).
    pub fn is_blank(b: u8) -> bool {
        b == b' ' || b == b'\t' || b == b'\r'
    }

    /// Any whitespace of the token-oriented files: the blanks plus LF.
    pub fn is_space(b: u8) -> bool {
        is_blank(b) || b == b'\n'
    }

    /// The result of parsing one token as a 64-bit integer.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Num {
        Int(i64),
        /// Digits only, but the value does not fit 64 bits (so it is out of any range we accept).
        Overflow,
        /// Not an integer at all.
        NotNumber,
    }

    /// Parses a whole token with `std::from_chars` semantics: optional `-`, no `+`, decimal digits.
    pub fn parse_i64(tok: &[u8]) -> Num {
        let (neg, digits) = match tok.split_first() {
            Some((b'-', rest)) => (true, rest),
            _ => (false, tok),
        };
        if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
            return Num::NotNumber;
        }
        let mut v: i64 = 0;
        for &d in digits {
            let digit = i64::from(d - b'0');
            // Accumulate negatively so that i64::MIN parses too.
            v = match v.checked_mul(10).and_then(|x| x.checked_sub(digit)) {
                Some(x) => x,
                None => return Num::Overflow,
            };
        }
        if neg {
            Num::Int(v)
        } else {
            v.checked_neg().map_or(Num::Overflow, Num::Int)
        }
    }

    /// A token with its 1-based line and column.
    #[derive(Debug, Clone, Copy)]
    pub struct Tok<'a> {
        pub text: &'a [u8],
        pub line: usize,
        pub col: usize,
    }

    /// Splits a buffer into tokens separated by any whitespace, tracking line and column.
    pub struct Tokens<'a> {
        buf: &'a [u8],
        pos: usize,
        line: usize,
        line_start: usize,
    }

    impl<'a> Tokens<'a> {
        pub fn new(buf: &'a [u8]) -> Self {
            Tokens {
                buf,
                pos: 0,
                line: 1,
                line_start: 0,
            }
        }

        /// Skips blanks only; returns true if a token (not a newline or the end) follows.
        pub fn token_on_this_line(&mut self) -> bool {
            while self.pos < self.buf.len() && is_blank(self.buf[self.pos]) {
                self.pos += 1;
            }
            self.pos < self.buf.len() && self.buf[self.pos] != b'\n'
        }

        /// The position of the next unread byte (1-based line and column).
        pub fn position(&self) -> (usize, usize) {
            (self.line, self.pos - self.line_start + 1)
        }

        fn skip_space(&mut self) {
            while self.pos < self.buf.len() && is_space(self.buf[self.pos]) {
                if self.buf[self.pos] == b'\n' {
                    self.line += 1;
                    self.line_start = self.pos + 1;
                }
                self.pos += 1;
            }
        }

        /// The token at the current position, without skipping anything first.
        fn take(&mut self) -> Option<Tok<'a>> {
            let start = self.pos;
            while self.pos < self.buf.len() && !is_space(self.buf[self.pos]) {
                self.pos += 1;
            }
            (self.pos > start).then(|| Tok {
                text: &self.buf[start..self.pos],
                line: self.line,
                col: start - self.line_start + 1,
            })
        }
    }

    impl<'a> Iterator for Tokens<'a> {
        type Item = Tok<'a>;

        fn next(&mut self) -> Option<Tok<'a>> {
            self.skip_space();
            self.take()
        }
    }

    /// The blank-separated tokens of one line (which holds no LF), with 1-based columns.
    pub fn line_tokens(line: &[u8]) -> impl Iterator<Item = (usize, &[u8])> {
        let mut pos = 0;
        std::iter::from_fn(move || {
            while pos < line.len() && is_blank(line[pos]) {
                pos += 1;
            }
            let start = pos;
            while pos < line.len() && !is_blank(line[pos]) {
                pos += 1;
            }
            (pos > start).then(|| (start + 1, &line[start..pos]))
        })
    }

    /// The lines of a buffer with their 1-based numbers (a final line without LF counts too).
    pub fn lines(buf: &[u8]) -> impl Iterator<Item = (usize, &[u8])> {
        let body = buf.strip_suffix(b"\n").unwrap_or(buf);
        let empty = buf.is_empty();
        body.split(|&b| b == b'\n')
            .enumerate()
            .filter(move |_| !empty)
            .map(|(i, l)| (i + 1, l))
    }

    /// The position just after the last byte, for "the file ends too early" errors.
    pub fn end_position(buf: &[u8]) -> (usize, usize) {
        let line = 1 + buf.iter().filter(|&&b| b == b'\n').count();
        let start = buf.iter().rposition(|&b| b == b'\n').map_or(0, |p| p + 1);
        (line, buf.len() - start + 1)
    }

    /// Reads a whole file, mapping the OS error to [`Error::io`] on that path.
    pub fn read_file(path: &Path) -> Result<Vec<u8>> {
        std::fs::read(path).map_err(|e| Error::io(path, e))
    }

    /// Bytes of a piece of [`read_pieces`].
    const PIECE: usize = 1 << 20;

    /// Feeds the file at `path` to `f` in pieces of about a MiB, each ending just after its last
    /// byte for which `cut` holds (the last piece at the end of the file), through one buffer:
    /// reading a large file then touches a piece's worth of fresh memory instead of the file's,
    /// whose page faults cost more than parsing it did (docs/performance.md, "The machine").
    /// `Ok(None)` once `f` gives up, or when a whole piece holds no byte to cut at.
    pub fn read_pieces(path: &Path, cut: impl Fn(u8) -> bool, f: impl FnMut(&[u8]) -> Option<()>) -> Result<Option<()>> {
        read_pieces_of(path, 0..u64::MAX, cut, f)
    }

    /// [`read_pieces`] over the bytes `range` of the file only.
    pub fn read_pieces_of(path: &Path, range: std::ops::Range<u64>, cut: impl Fn(u8) -> bool, mut f: impl FnMut(&[u8]) -> Option<()>) -> Result<Option<()>> {
        use std::io::{Read, Seek};
        let mut file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
        if range.start > 0 {
            file.seek(std::io::SeekFrom::Start(range.start)).map_err(|e| Error::io(path, e))?;
        }
        let mut file = file.take(range.end.saturating_sub(range.start));
        let mut buf = vec![0u8; PIECE];
        let mut held = 0;
        loop {
            if held == buf.len() {
                return Ok(None);
            }
            let got = loop {
                match file.read(&mut buf[held..]) {
                    Ok(got) => break got,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(Error::io(path, e)),
                }
            };
            if got == 0 {
                return Ok(f(&buf[..held]));
            }
            held += got;
            let Some(end) = buf[..held].iter().rposition(|&b| cut(b)).map(|at| at + 1) else {
                continue;
            };
            if f(&buf[..end]).is_none() {
                return Ok(None);
            }
            buf.copy_within(end..held, 0);
            held -= end;
        }
    }

    /// The offset just after the first newline at or after `at` in the file at `path`, if any
    /// (where a file of lines can be cut in two).
    pub fn next_line_start(path: &Path, at: u64) -> Option<u64> {
        use std::io::{Read, Seek};
        let mut file = std::fs::File::open(path).ok()?;
        file.seek(std::io::SeekFrom::Start(at)).ok()?;
        let mut buf = [0u8; 4096];
        let mut pos = at;
        loop {
            let got = file.read(&mut buf).ok()?;
            if got == 0 {
                return None;
            }
            if let Some(i) = buf[..got].iter().position(|&b| b == b'\n') {
                return Some(pos + i as u64 + 1);
            }
            pos += got as u64;
        }
    }

    /// The size of the file at `path` in bytes, 0 where it cannot be told (a capacity hint).
    pub fn file_len(path: &Path) -> usize {
        std::fs::metadata(path).map_or(0, |m| m.len() as usize)
    }

    /// Writes a whole file, mapping the OS error to [`Error::io`] on that path.
    pub fn write_file(path: &Path, bytes: &[u8]) -> Result<()> {
        std::fs::write(path, bytes).map_err(|e| Error::io(path, e))
    }

    /// Appends the decimal form of `v` (no sign for non-negative values, no leading zeros).
    pub fn push_i64(out: &mut Vec<u8>, v: i64) {
        let mut tmp = [0u8; MAX_I64_LEN];
        let len = put_i64(&mut tmp, v);
        out.extend_from_slice(&tmp[..len]);
    }

    /// The longest decimal form of an i64 (`-9223372036854775808`).
    pub const MAX_I64_LEN: usize = 20;

    /// "00" to "99": two digits a division.
    const PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
        2021222324252627282930313233343536373839\
        4041424344454647484950515253545556575859\
        6061626364656667686970717273747576777879\
        8081828384858687888990919293949596979899";

    /// 10^i, for the digit count of [`digits`].
    const POWERS: [u64; 20] = {
        let mut p = [1u64; 20];
        let mut i = 1;
        while i < 20 {
            p[i] = p[i - 1] * 10;
            i += 1;
        }
        p
    };

    /// The number of decimal digits of `x` (1 for 0): from its bit length b, 10^t <= 2^b for
    /// t = floor(b log10(2)) (log10(2) ~ 1233 / 4096), and one comparison, where `ilog10`
    /// compared its way down (a seventh of an output file's time).
    #[inline]
    fn digits(x: u64) -> usize {
        let x = x | 1;
        let t = (((64 - x.leading_zeros()) * 1233) >> 12) as usize;
        t + 1 - usize::from(x < POWERS[t])
    }

    /// Writes the decimal form of `v` at the start of `out` (at least [`MAX_I64_LEN`] bytes);
    /// returns its length.
    #[inline]
    pub fn put_i64(out: &mut [u8], v: i64) -> usize {
        let sign = usize::from(v < 0);
        if v < 0 {
            out[0] = b'-';
        }
        let mut x = v.unsigned_abs();
        let len = sign + digits(x);
        let mut i = len;
        while x >= 100 {
            let r = 2 * (x % 100) as usize;
            x /= 100;
            i -= 2;
            out[i..i + 2].copy_from_slice(&PAIRS[r..r + 2]);
        }
        if x >= 10 {
            let r = 2 * x as usize;
            out[i - 2..i].copy_from_slice(&PAIRS[r..r + 2]);
        } else {
            out[i - 1] = b'0' + x as u8;
        }
        len
    }

    /// The decimal forms of 0, 1, 2, ... in turn, for the vertex that starts each line of an
    /// output file: a step changes the last digit but at a carry, where formatting each number
    /// afresh paid a division per two digits (half of an output's numbers are these). The digits
    /// lie at the start of a fixed array, which [`Block::counter`] copies whole.
    pub struct Counter {
        digits: [u8; MAX_I64_LEN],
        len: usize,
    }

    impl Counter {
        /// At 0.
        pub fn new() -> Self {
            Counter { digits: [b'0'; MAX_I64_LEN], len: 1 }
        }

        /// The current number's digits.
        #[cfg(test)]
        pub fn digits(&self) -> &[u8] {
            &self.digits[..self.len]
        }

        /// Moves on to the next number (up to 10^20 - 1).
        #[inline]
        pub fn step(&mut self) {
            for i in (0..self.len).rev() {
                if self.digits[i] != b'9' {
                    self.digits[i] += 1;
                    return;
                }
                self.digits[i] = b'0';
            }
            // 10^len: a 1 followed by the len zeros already there.
            self.digits[0] = b'1';
            self.digits[self.len] = b'0';
            self.len += 1;
        }
    }

    impl Default for Counter {
        fn default() -> Self {
            Counter::new()
        }
    }

    /// Text made in a block on the stack and handed on a block at a time: one copy per block
    /// rather than one per number (a call to `memmove` each, a tenth of a grid run's time).
    pub struct Block {
        bytes: [u8; Block::SIZE],
        at: usize,
    }

    impl Block {
        const SIZE: usize = 8192;

        pub fn new() -> Self {
            Block { bytes: [0; Block::SIZE], at: 0 }
        }

        /// Bytes that can still be put.
        #[inline]
        pub fn room(&self) -> usize {
            Block::SIZE - self.at
        }

        /// Puts the decimal form of `v` (needs [`MAX_I64_LEN`] bytes of room).
        #[inline]
        pub fn int(&mut self, v: i64) {
            self.at += put_i64(&mut self.bytes[self.at..], v);
        }

        /// Puts `b` (needs their length of room).
        #[inline]
        pub fn put(&mut self, b: &[u8]) {
            self.bytes[self.at..self.at + b.len()].copy_from_slice(b);
            self.at += b.len();
        }

        /// Puts the counter's number (needs [`MAX_I64_LEN`] bytes of room): its whole array is
        /// copied, a fixed size, where a copy of its length was a call to `memcpy`.
        #[inline]
        pub fn counter(&mut self, c: &Counter) {
            self.bytes[self.at..self.at + MAX_I64_LEN].copy_from_slice(&c.digits);
            self.at += c.len;
        }

        /// Puts one byte.
        #[inline]
        pub fn byte(&mut self, b: u8) {
            self.bytes[self.at] = b;
            self.at += 1;
        }

        /// What was put since the last [`Block::take`], which empties the block.
        pub fn take(&mut self) -> &[u8] {
            let n = std::mem::take(&mut self.at);
            &self.bytes[..n]
        }
    }

    impl Default for Block {
        fn default() -> Self {
            Block::new()
        }
    }
}

/// Fast paths of the readers for well-formed files: one pass over the bytes, no positions kept.
/// Each gives up (`None`) at the first byte it does not expect (a sign, a long or out-of-range
/// token, a short line, a repeated vertex...), and the general reader then reads the file and
/// reports its first error, with its position, in the original's order. So both accept exactly
/// the same files with the same values; the fast path only skips the bookkeeping, which had made
/// the readers 1.2-1.5x slower than the original's.
pub(crate) mod fast {
    use super::lex::{is_blank, is_space};

    /// A token of decimal digits at `*i` (at most 10, so no overflow): its value, with `*i` moved
    /// past it; `None` if there is no digit or the token goes on with another byte than
    /// whitespace.
    #[inline(always)]
    pub fn digits(buf: &[u8], i: &mut usize) -> Option<u64> {
        digits_up_to(buf, i, 10)
    }

    /// [`digits`] with at most `most` digits (at most 18: no overflow).
    #[inline(always)]
    pub fn digits_up_to(buf: &[u8], i: &mut usize, most: usize) -> Option<u64> {
        let start = *i;
        let mut v = 0u64;
        // Eight bytes at a time where eight remain: the token's length from where its first
        // non-digit is, without a branch per digit (a branch whose exit mispredicted on the
        // Values files' weights of 1 to 3 digits).
        if let Some(word) = buf.get(start..start + 8) {
            let word = u64::from_le_bytes(word.try_into().unwrap_or_default());
            let (len, value) = swar_digits(word);
            *i += len;
            if len < 8 {
                return (len > 0 && len <= most && ends_token(buf, *i)).then_some(value);
            }
            v = value;
        }
        while let Some(&b) = buf.get(*i) {
            let d = b.wrapping_sub(b'0');
            if d > 9 {
                break;
            }
            // Past `most` digits the value is refused below: wrapping, it cannot overflow meanwhile.
            v = v.wrapping_mul(10).wrapping_add(d as u64);
            *i += 1;
        }
        let len = *i - start;
        (len > 0 && len <= most && ends_token(buf, *i)).then_some(v)
    }

    /// The leading decimal digits of the eight bytes `word` (the first byte lowest): how many
    /// there are (0 to 8) and their value.
    #[inline(always)]
    fn swar_digits(word: u64) -> (usize, u64) {
        const ONES: u64 = 0x0101_0101_0101_0101;
        let x = word.wrapping_sub(0x30 * ONES);
        // A byte's high bit is set where the byte is not a digit: below '0' the subtraction
        // wrapped it to 0xD0 or more, above '9' adding 0x76 carries it past 0x7F. Borrows and
        // carries only reach the bytes above, so the lowest flag is the first non-digit's.
        let flags = (x | x.wrapping_add(0x76 * ONES)) & (0x80 * ONES);
        let len = (flags.trailing_zeros() / 8) as usize;
        if len == 0 {
            return (0, 0);
        }
        // The digits moved to the top bytes (zeros before them), then combined in pairs, fours
        // and the eight.
        let d = x << (8 * (8 - len));
        let d = (d.wrapping_mul((10 << 8) | 1) >> 8) & 0x00FF_00FF_00FF_00FF;
        let d = (d.wrapping_mul((100 << 16) | 1) >> 16) & 0x0000_FFFF_0000_FFFF;
        let d = d.wrapping_mul((10_000 << 32) | 1) >> 32;
        (len, d)
    }

    /// Whether a token ends at `i` (whitespace or the end of the file follows).
    #[inline(always)]
    pub fn ends_token(buf: &[u8], i: usize) -> bool {
        !matches!(buf.get(i), Some(&b) if !is_space(b))
    }

    #[inline(always)]
    pub fn skip_space(buf: &[u8], i: &mut usize) {
        while buf.get(*i).is_some_and(|&b| is_space(b)) {
            *i += 1;
        }
    }

    #[inline(always)]
    pub fn skip_blanks(buf: &[u8], i: &mut usize) {
        while buf.get(*i).is_some_and(|&b| is_blank(b)) {
            *i += 1;
        }
    }

    /// Whitespace-separated integers in [0, `max`], pushed to `out`.
    pub fn ints(buf: &[u8], max: u64, out: &mut Vec<i32>) -> Option<()> {
        let mut i = 0;
        loop {
            skip_space(buf, &mut i);
            if i == buf.len() {
                return Some(());
            }
            let v = digits(buf, &mut i).filter(|&v| v <= max)?;
            out.push(v as i32);
        }
    }

    /// Where [`values`] puts the weights.
    pub trait Sink {
        /// K is known (the first non-empty line's tokens): how many lines may follow (0: give up).
        fn start(&mut self, k: usize) -> usize;
        /// Token `j` of the `e`-th non-empty line.
        fn put(&mut self, e: usize, j: usize, w: i32);
    }

    /// Edge-major weights, in file order.
    impl Sink for Vec<i32> {
        fn start(&mut self, _k: usize) -> usize {
            usize::MAX
        }
        fn put(&mut self, _e: usize, _j: usize, w: i32) {
            self.push(w);
        }
    }

    /// The weights of a Values file, every weight in [1, 2^31-1] and every non-empty line with as
    /// many tokens as the first, into `sink`. Returns (K, lines).
    pub fn values(buf: &[u8], sink: &mut impl Sink) -> Option<(usize, usize)> {
        let mut v = Values::default();
        v.feed(buf, sink)?;
        Some((v.k, v.lines))
    }

    /// [`values`] over a file fed in pieces of whole lines.
    #[derive(Default)]
    pub struct Values {
        /// K (0 until the first non-empty line ends) and the non-empty lines read.
        pub k: usize,
        pub lines: usize,
        room: usize,
        first: Vec<i32>,
    }

    impl Values {
        /// The next piece (whole lines, the last one perhaps without its newline).
        pub fn feed(&mut self, buf: &[u8], sink: &mut impl Sink) -> Option<()> {
            let mut i = 0;
            while i < buf.len() {
                skip_blanks(buf, &mut i);
                let mut j = 0;
                while buf.get(i).is_some_and(|&b| b != b'\n') {
                    let w = digits(buf, &mut i).filter(|&w| (1..=i32::MAX as u64).contains(&w))? as i32;
                    if self.k == 0 {
                        self.first.push(w);
                    } else {
                        if j == self.k || self.lines == self.room {
                            return None;
                        }
                        sink.put(self.lines, j, w);
                    }
                    j += 1;
                    skip_blanks(buf, &mut i);
                }
                if j > 0 {
                    if self.k == 0 {
                        self.k = j;
                        self.room = sink.start(j);
                        if self.room == 0 {
                            return None;
                        }
                        for (jj, &w) in self.first.iter().enumerate() {
                            sink.put(0, jj, w);
                        }
                    } else if j != self.k {
                        return None;
                    }
                    self.lines += 1;
                }
                i += 1; // the newline
            }
            Some(())
        }
    }

    /// `v x` records, v in [0, n) listed once, x read on v's line (after blanks) and stored at
    /// `out[v]`, from a file fed in pieces of whole lines; [`Records::complete`] once all n
    /// vertices were listed.
    pub struct Records {
        /// A bit per vertex, set until it is listed. Ones, so that the pages are written when
        /// made: zeroed ones would be mapped read-only at the first test and copied at the first
        /// set, a second fault that also flushes the other threads' TLBs.
        unseen: Vec<u64>,
        n: usize,
        count: usize,
    }

    impl Records {
        pub fn new(n: usize) -> Self {
            Records { unseen: vec![!0; n.div_ceil(64)], n, count: 0 }
        }

        /// The next piece (whole lines, the last one perhaps without its newline).
        pub fn feed<T: Copy>(&mut self, buf: &[u8], out: &mut [T], mut value: impl FnMut(&[u8], &mut usize) -> Option<T>) -> Option<()> {
            let n = out.len();
            let mut i = 0;
            loop {
                skip_space(buf, &mut i);
                if i == buf.len() {
                    return Some(());
                }
                let v = digits(buf, &mut i).filter(|&v| (v as usize) < n)? as usize;
                skip_blanks(buf, &mut i);
                let x = value(buf, &mut i)?;
                let (word, bit) = (&mut self.unseen[v / 64], 1u64 << (v % 64));
                if *word & bit == 0 {
                    return None;
                }
                *word &= !bit;
                out[v] = x;
                self.count += 1;
            }
        }

        /// Whether every vertex was listed.
        pub fn complete(&self) -> bool {
            self.count == self.n
        }
    }
}

use lex::{Num, Tokens};

/// The three file paths of a prefix, in the order RowPtr, ColInd, Values.
pub fn triplet_paths(prefix: &Path) -> [PathBuf; 3] {
    let with = |suffix: &str| {
        let mut s = prefix.as_os_str().to_owned();
        s.push(suffix);
        PathBuf::from(s)
    };
    [with("RowPtr.txt"), with("ColInd.txt"), with("Values.txt")]
}

/// The largest weight, offset or id value (2^31-1).
const I32_MAX: i64 = i32::MAX as i64;

/// Why a whitespace-separated integer file could not be used as a whole.
enum IntsError {
    /// A value outside [0, 2^31-1] (checked first, in the original's order).
    Range(Error),
    /// The file is missing or holds a token that is not a number.
    Unreadable(Error),
}

/// Reads every token of a RowPtr/ColInd file as an integer in [0, 2^31-1].
fn read_ints(path: &Path, range_msg: &str) -> std::result::Result<Vec<i32>, IntsError> {
    let buf = lex::read_file(path).map_err(IntsError::Unreadable)?;
    let mut out = Vec::with_capacity(buf.len() / 4);
    if fast::ints(&buf, I32_MAX as u64, &mut out).is_some() {
        return Ok(out);
    }
    out.clear();
    for tok in Tokens::new(&buf) {
        match lex::parse_i64(tok.text) {
            Num::Int(v) if (0..=I32_MAX).contains(&v) => out.push(v as i32),
            Num::Int(_) | Num::Overflow => {
                let msg = format!("{range_msg} ({})", String::from_utf8_lossy(tok.text));
                return Err(IntsError::Range(Error::parse(path, tok.line, tok.col, msg)));
            }
            Num::NotNumber => {
                let msg = format!("not an integer: {:?}", String::from_utf8_lossy(tok.text));
                return Err(IntsError::Unreadable(Error::parse(
                    path, tok.line, tok.col, msg,
                )));
            }
        }
    }
    Ok(out)
}

/// The Values file as parsed: K and the edge-major weights, one record per non-empty line.
struct Values {
    k: usize,
    weights: Vec<i32>,
    lines: usize,
}

/// Parses the line-oriented Values file; K is the token count of the first non-empty line.
fn read_values(path: &Path) -> Result<Values> {
    let buf = lex::read_file(path)?;
    let mut weights = Vec::with_capacity(buf.len() / 3);
    let read = fast::values(&buf, &mut weights);
    if let Some((k, lines)) = read {
        return Ok(Values { k, weights, lines });
    }
    let mut vals = Values {
        k: 0,
        weights: Vec::new(),
        lines: 0,
    };
    for (line_no, line) in lex::lines(&buf) {
        let before = vals.weights.len();
        for (col, tok) in lex::line_tokens(line) {
            match lex::parse_i64(tok) {
                Num::Int(w) if (1..=I32_MAX).contains(&w) => vals.weights.push(w as i32),
                _ => {
                    let msg = format!(
                        "weights must be integers in [1, 2^31-1] (found {:?})",
                        String::from_utf8_lossy(tok)
                    );
                    return Err(Error::parse(path, line_no, col, msg));
                }
            }
        }
        let count = vals.weights.len() - before;
        if count == 0 {
            continue; // a line without tokens is skipped, not counted
        }
        if vals.lines == 0 {
            vals.k = count;
        } else if count != vals.k {
            let msg = format!(
                "Inconsistent number of objectives: this line has {count} weights, the first non-empty line has {}",
                vals.k
            );
            return Err(Error::parse(path, line_no, 1, msg));
        }
        vals.lines += 1;
    }
    Ok(vals)
}

/// Re-reads a token file to find the position of token `index` (or the end if there are fewer).
/// Errors are located after parsing so that the parse itself keeps no per-token positions.
fn locate_token(path: &Path, index: usize) -> (usize, usize) {
    let Ok(buf) = std::fs::read(path) else {
        return (0, 0);
    };
    let mut toks = Tokens::new(&buf);
    match toks.nth(index) {
        Some(t) => (t.line, t.col),
        None => lex::end_position(&buf),
    }
}

/// Re-reads the Values file to find the line of its non-empty line `index` (0-based).
fn locate_values_line(path: &Path, index: usize) -> (usize, usize) {
    let Ok(buf) = std::fs::read(path) else {
        return (0, 0);
    };
    let mut non_empty = lex::lines(&buf).filter(|(_, l)| lex::line_tokens(l).next().is_some());
    match non_empty.nth(index) {
        Some((line, _)) => (line, 1),
        None => lex::end_position(&buf),
    }
}

fn parse_err_at(path: &Path, pos: (usize, usize), msg: String) -> Error {
    Error::parse(path, pos.0, pos.1, msg)
}

/// Reads `<prefix>RowPtr.txt`, `<prefix>ColInd.txt` and `<prefix>Values.txt` (spec 1.4).
///
/// The files are parsed concurrently; errors are then reported in the original's order: row-pointer
/// range, column range, RowPtr unreadable or short, `rowPtr[0] != 0`, non-monotone rows, ColInd count,
/// column >= n, Values errors, Values line count. An empty Values file gives `k = 0`.
pub fn read_csr_triplet(prefix: &Path) -> Result<CsrText> {
    let [rp_path, ci_path, val_path] = triplet_paths(prefix);
    let (rp, ci, vals) = std::thread::scope(|s| -> Result<_> {
        let rp = crate::io::spawn_reader(s, || read_ints(&rp_path, "CSR row pointer out of range"))?;
        let ci = crate::io::spawn_reader(s, || read_ints(&ci_path, "CSR column index out of range"))?;
        let vals = read_values(&val_path);
        Ok((join(rp), join(ci), vals))
    })?;
    let (rp, ci) = (rp?, ci?);
    if let Err(IntsError::Range(e)) = rp {
        return Err(e);
    }
    if let Err(IntsError::Range(e)) = ci {
        return Err(e);
    }
    let row_ptr = check_row_ptr(&rp_path, rp)?;
    let n = row_ptr.len() - 1;
    let m = row_ptr[n] as usize;
    let col_ind = check_col_ind(&ci_path, ci, n, m)?;
    let vals = vals?;
    if vals.lines != m {
        let pos = locate_values_line(&val_path, vals.lines.min(m));
        let msg = format!(
            "values size mismatch: {} non-empty lines, want m = {m}",
            vals.lines
        );
        return Err(parse_err_at(&val_path, pos, msg));
    }
    Ok(CsrText {
        n,
        k: vals.k,
        row_ptr,
        col_ind,
        weights: vals.weights,
    })
}

/// K of a graph read from text: the Values file's, or `requested` for a graph without edges (whose
/// empty Values file tells none).
pub fn objectives(k_read: usize, requested: Option<usize>) -> Result<usize> {
    match (k_read, requested) {
        (0, Some(k)) => Ok(k),
        (0, None) => Err(Error::invalid(
            "the graph has no edges, so the number of objectives cannot be inferred from its values file (pass -k K)",
        )),
        (k, _) => Ok(k),
    }
}

/// The K weight columns of a Values file's lines, written as it is read (its lines in edge order),
/// each with the room `room` gives it: at most `most` lines.
struct Columns {
    most: usize,
    room: Room,
    cols: Vec<Vec<i32>>,
}

/// The room of each column of [`Columns`], once K is known.
enum Room {
    /// The room a graph's rows keep for m edges (`SlackRows::column_capacity`), so that a graph
    /// takes the columns over uncopied.
    Edges(usize),
    /// The most lines this many bytes can hold (a line of K weights takes 2K bytes or more).
    Bytes(usize),
}

impl Columns {
    /// The columns of a whole file of m lines.
    fn of_edges(m: usize) -> Self {
        Columns { most: m, room: Room::Edges(m), cols: Vec::new() }
    }

    /// The columns of a file's last `bytes` bytes, however many lines the file has in all.
    fn of_bytes(bytes: usize) -> Self {
        Columns { most: usize::MAX, room: Room::Bytes(bytes), cols: Vec::new() }
    }
}

impl fast::Sink for Columns {
    fn start(&mut self, k: usize) -> usize {
        if k > crate::graph::MAX_OBJECTIVES {
            return 0;
        }
        let room = match self.room {
            Room::Edges(m) => crate::graph::rows::SlackRows::column_capacity(m),
            Room::Bytes(bytes) => bytes / (2 * k) + 1,
        };
        self.cols = (0..k).map(|_| Vec::with_capacity(room)).collect();
        self.most
    }
    fn put(&mut self, e: usize, j: usize, w: i32) {
        debug_assert_eq!(self.cols[j].len(), e, "the lines come in edge order");
        self.cols[j].push(w);
    }
}

/// A triplet as the fast path reads it: checked, the weights in K columns.
struct Triplet {
    row_ptr: Vec<i32>,
    col_ind: Vec<i32>,
    columns: Vec<Vec<i32>>,
    facts: Vec<ColumnFacts>,
}

/// Values files from this size on are parsed in two halves at once: the Values file is the
/// largest of the three and its parse the longest (the 1000^2 grid's 37 MB: 150-160 ms, while
/// its ColInd took 45), so that the read waited on it alone.
const SPLIT_VALUES_FROM: usize = 4 << 20;

/// The second half of a large Values file (from the first line start past its middle), parsed
/// on a thread of `scope` into columns of its own, with their facts: it needs nothing of the
/// other files, so it starts before the RowPtr file is read.
struct SecondHalf<'s> {
    at: u64,
    parsed: std::thread::ScopedJoinHandle<'s, Option<ParsedHalf>>,
}

/// A half's lines, its columns and their facts.
type ParsedHalf = (fast::Values, Vec<Vec<i32>>, Vec<ColumnFacts>);

fn spawn_second_half<'s>(scope: &'s std::thread::Scope<'s, '_>, path: &'s Path) -> Option<SecondHalf<'s>> {
    let len = lex::file_len(path);
    let at = (len >= SPLIT_VALUES_FROM).then(|| lex::next_line_start(path, len as u64 / 2)).flatten()?;
    let parsed = scope.spawn(move || {
        let mut half = Columns::of_bytes(len - at as usize);
        let v = parse_values(path, at..u64::MAX, &mut half)?;
        let facts = half.cols.iter().map(|c| ColumnFacts::of_slice(c)).collect();
        Some((v, half.cols, facts))
    });
    Some(SecondHalf { at, parsed })
}

/// The fast path's Values file: `m` lines of weights into K columns, their facts, and K; the
/// first half (or all of a small file) parsed here, the second half's columns joined after it.
fn read_values_fast(path: &Path, m: usize, second: Option<SecondHalf<'_>>) -> Option<(usize, Vec<Vec<i32>>, Vec<ColumnFacts>)> {
    let mut sink = Columns::of_edges(m);
    let v = parse_values(path, 0..second.as_ref().map_or(u64::MAX, |h| h.at), &mut sink)?;
    let mut facts: Vec<ColumnFacts> = sink.cols.iter().map(|c| ColumnFacts::of_slice(c)).collect();
    let mut lines = v.lines;
    if let Some(h) = second {
        let (more, weights, more_facts) = h.parsed.join().ok()??;
        // The halves' lines must agree on K (an empty half has none); the second half's columns
        // go after the first's.
        if more.lines > 0 {
            if more.k != v.k || v.k == 0 {
                return None;
            }
            for (col, rest) in sink.cols.iter_mut().zip(&weights) {
                col.extend_from_slice(rest);
            }
            for (f, g) in facts.iter_mut().zip(more_facts) {
                *f = f.merge(g);
            }
        }
        lines += more.lines;
    }
    (lines == m).then_some((v.k, sink.cols, facts))
}

/// Parses the lines of the bytes `range` of a Values file into `sink`: its K and lines read.
fn parse_values(path: &Path, range: std::ops::Range<u64>, sink: &mut impl fast::Sink) -> Option<fast::Values> {
    let mut v = fast::Values::default();
    lex::read_pieces_of(path, range, |b| b == b'\n', |piece| v.feed(piece, sink)).ok()??;
    Some(v)
}

/// The fast path of [`read_csr`] and [`read_graph_and`]: `None` for a file it does not take. The
/// second half of a large Values file is parsed from the start, the ColInd file once the RowPtr
/// file has given n and m, the first half of the Values file meanwhile here. `early`, where
/// given, runs on a thread of its own from the moment n and K are known (K as the Values file's
/// first line gives it), and comes back with the n and K it was given.
fn read_triplet_fast<R: Send>(prefix: &Path, k: Option<usize>, early: Option<&(dyn Fn(usize, usize) -> R + Sync)>) -> (Option<Triplet>, Option<(usize, usize, R)>, Instant) {
    let [rp_path, ci_path, val_path] = triplet_paths(prefix);
    let (mut ran, mut parsed) = (None, Instant::now());
    let read = std::thread::scope(|s| {
        let second = spawn_second_half(s, &val_path);
        let mut row_ptr = Vec::with_capacity(lex::file_len(&rp_path) / 4 + 1);
        lex::read_pieces(&rp_path, lex::is_space, |piece| fast::ints(piece, I32_MAX as u64, &mut row_ptr)).ok()??;
        if row_ptr.len() < 2 || row_ptr[0] != 0 || row_ptr.windows(2).any(|w| w[1] < w[0]) {
            return None;
        }
        let n = row_ptr.len() - 1;
        let m = row_ptr[n] as usize;
        let early = early.and_then(|f| {
            let kg = first_line_tokens(&val_path).and_then(|kv| objectives(kv, k).ok())?;
            Some(s.spawn(move || (n, kg, f(n, kg))))
        });
        let ci_path = &ci_path;
        let ci = s.spawn(move || {
            let mut col = Vec::with_capacity(crate::graph::rows::SlackRows::column_capacity(m));
            lex::read_pieces(ci_path, lex::is_space, |piece| fast::ints(piece, n as u64 - 1, &mut col)).ok()??;
            (col.len() == m).then_some(col)
        });
        let values = read_values_fast(&val_path, m, second);
        let read = ci.join().ok().flatten().zip(values);
        parsed = Instant::now();
        ran = early.and_then(|h| h.join().ok());
        let (col_ind, (kv, columns, facts)) = read?;
        Some((row_ptr, col_ind, kv, columns, facts))
    });
    let triplet = read.and_then(|(row_ptr, col_ind, kv, mut columns, mut facts)| {
        let k = objectives(kv, k).ok().filter(|&k| (1..=crate::graph::MAX_OBJECTIVES).contains(&k))?;
        // An edgeless graph's K comes from the caller: its columns are empty.
        columns.resize_with(k, Vec::new);
        facts.resize_with(k, || ColumnFacts::of_slice(&[]));
        Some(Triplet { row_ptr, col_ind, columns, facts })
    });
    (triplet, ran, parsed)
}

/// The tokens of the first non-blank line of the file at `path` (within its first 64 KiB).
fn first_line_tokens(path: &Path) -> Option<usize> {
    use std::io::Read;
    let mut head = Vec::new();
    std::fs::File::open(path).ok()?.take(64 << 10).read_to_end(&mut head).ok()?;
    let tokens = lex::lines(&head).map(|(_, line)| lex::line_tokens(line).count()).find(|&c| c > 0);
    tokens
}

/// Reads the triplet straight into a [`Csr`]: the weights into objective-major columns as they
/// are read, and no second check of what the reading checked (what [`read_csr_triplet`] and
/// `Csr::from_arrays` do in two steps, whose transposition and checks were a quarter of the
/// read). `k` gives K for a graph without edges. It accepts the same files and
/// reports the same errors as those two steps: a file its fast path does not take is read by
/// them.
pub fn read_csr(prefix: &Path, k: Option<usize>) -> Result<Csr> {
    if let (Some(t), ..) = read_triplet_fast::<()>(prefix, k, None) {
        let (n, k) = (t.row_ptr.len() - 1, t.columns.len());
        return Ok(Csr::from_parts_unchecked(n, k, t.row_ptr, t.col_ind, t.columns.concat(), t.facts));
    }
    read_csr_slow(prefix, k)
}

/// [`read_csr`] into a [`Graph`] (which takes the columns of the fast path over uncopied), and
/// `then(n, K)` of that graph: run alongside the read from the moment the RowPtr file and the
/// Values file's first line tell n and K (a driver's other inputs need no more), or after it
/// where those were not what the read found. A failed read is its error alone. Also returns
/// how long the graph's read took (with `then` beside it), without the wait for `then`.
pub(crate) fn read_graph_and<T: Send>(prefix: &Path, k: Option<usize>, then: impl Fn(usize, usize) -> T + Sync) -> Result<(Graph, T, std::time::Duration)> {
    let started = Instant::now();
    let (fast, early, parsed) = read_triplet_fast(prefix, k, Some(&then));
    let (graph, took) = match fast {
        Some(t) => {
            let built = Instant::now();
            let g = Graph::from_columns(&t.row_ptr, t.col_ind, t.columns, t.facts);
            (g, parsed.duration_since(started) + built.elapsed())
        }
        None => (read_csr_slow(prefix, k).map(Graph::new)?, started.elapsed()),
    };
    let t = match early {
        Some((n, kg, t)) if (n, kg) == (graph.n(), graph.k()) => t,
        _ => then(graph.n(), graph.k()),
    };
    Ok((graph, t, took))
}

/// The two steps a file the fast path does not take is read by.
fn read_csr_slow(prefix: &Path, k: Option<usize>) -> Result<Csr> {
    let text = read_csr_triplet(prefix)?;
    let k = objectives(text.k, k)?;
    Csr::from_arrays(text.n, k, text.row_ptr, text.col_ind, &text.weights, crate::graph::WeightLayout::EdgeMajor)
}

/// Joins a parsing thread; a panic there is a bug in this module, reported rather than propagated.
fn join<T>(h: std::thread::ScopedJoinHandle<'_, T>) -> Result<T> {
    h.join()
        .map_err(|_| Error::Internal("a CSR text parsing thread panicked".into()))
}

/// RowPtr checks after the range check: readable with >= 2 values, starts at 0, monotone.
fn check_row_ptr(path: &Path, rp: std::result::Result<Vec<i32>, IntsError>) -> Result<Vec<i32>> {
    let rp = match rp {
        Ok(v) => v,
        Err(IntsError::Range(e) | IntsError::Unreadable(e)) => return Err(e),
    };
    if rp.len() < 2 {
        let msg = format!(
            "CSR row pointer file holds {} values, at least 2 are required",
            rp.len()
        );
        return Err(parse_err_at(path, locate_token(path, rp.len()), msg));
    }
    if rp[0] != 0 {
        let msg = format!("CSR row pointers must start at 0 (found {})", rp[0]);
        return Err(parse_err_at(path, locate_token(path, 0), msg));
    }
    if let Some(i) = (1..rp.len()).find(|&i| rp[i] < rp[i - 1]) {
        let msg = format!(
            "CSR row pointers are not monotone (rowPtr[{i}] = {} < rowPtr[{}] = {})",
            rp[i],
            i - 1,
            rp[i - 1]
        );
        return Err(parse_err_at(path, locate_token(path, i), msg));
    }
    Ok(rp)
}

/// ColInd checks after the range check: readable, exactly m values, each below n.
fn check_col_ind(
    path: &Path,
    ci: std::result::Result<Vec<i32>, IntsError>,
    n: usize,
    m: usize,
) -> Result<Vec<i32>> {
    let ci = match ci {
        Ok(v) => v,
        Err(IntsError::Range(e) | IntsError::Unreadable(e)) => {
            let msg = format!("CSR column index file missing or size mismatch: {e}");
            return Err(match e {
                Error::Parse { line, column, .. } => Error::parse(path, line, column, msg),
                other => other,
            });
        }
    };
    if ci.len() != m {
        let msg = format!(
            "CSR column index file missing or size mismatch: {} indices, the row pointers give m = {m}",
            ci.len()
        );
        return Err(parse_err_at(path, locate_token(path, ci.len().min(m)), msg));
    }
    if let Some(e) = ci.iter().position(|&c| c as usize >= n) {
        let msg = format!("CSR column index out of range ({} >= n = {n})", ci[e]);
        return Err(parse_err_at(path, locate_token(path, e), msg));
    }
    Ok(ci)
}

/// The RowPtr file's exact bytes: one value per line.
pub fn format_row_ptr(t: &CsrText) -> Vec<u8> {
    format_column(&t.row_ptr)
}

/// The ColInd file's exact bytes: one value per line.
pub fn format_col_ind(t: &CsrText) -> Vec<u8> {
    format_column(&t.col_ind)
}

fn format_column(v: &[i32]) -> Vec<u8> {
    let mut out = Vec::with_capacity(v.len() * 8);
    for &x in v {
        lex::push_i64(&mut out, i64::from(x));
        out.push(b'\n');
    }
    out
}

/// The Values file's exact bytes: line e holds the K weights of edge e, single spaces.
pub fn format_values(t: &CsrText) -> Vec<u8> {
    let mut out = Vec::with_capacity(t.weights.len() * 6);
    if t.k == 0 {
        return out;
    }
    for row in t.weights.chunks(t.k) {
        for (j, &w) in row.iter().enumerate() {
            if j > 0 {
                out.push(b' ');
            }
            lex::push_i64(&mut out, i64::from(w));
        }
        out.push(b'\n');
    }
    out
}

/// Writes the triplet with the original's exact bytes (spec 1.4).
pub fn write_csr_triplet(prefix: &Path, t: &CsrText) -> Result<()> {
    check_shape(t)?;
    let [rp, ci, val] = triplet_paths(prefix);
    lex::write_file(&rp, &format_row_ptr(t))?;
    lex::write_file(&ci, &format_col_ind(t))?;
    lex::write_file(&val, &format_values(t))
}

/// Array lengths must agree, or the written files would not read back as the same graph.
fn check_shape(t: &CsrText) -> Result<()> {
    let m = t.col_ind.len();
    let ok = t.row_ptr.len() == t.n + 1
        && t.row_ptr.last().is_some_and(|&x| x as usize == m && x >= 0)
        && t.weights.len() == m * t.k;
    if ok {
        Ok(())
    } else {
        Err(Error::invalid(format!(
            "dyng: CSR arrays disagree: n = {}, {} row pointers, {} column indices, {} weights for K = {}",
            t.n,
            t.row_ptr.len(),
            m,
            t.weights.len(),
            t.k
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::lex::{parse_i64, push_i64, Num};
    use super::*;

    /// Every vertex listed once completes the records, in any order and across the bit words; a
    /// vertex listed again (at a word's first and last bit, and past a word) is refused.
    #[test]
    fn records_take_each_vertex_once() {
        let value = |b: &[u8], i: &mut usize| fast::digits(b, i);
        for n in [1, 63, 64, 65, 130] {
            let text: String = (0..n).rev().map(|v| format!("{v} {}\n", v * 3)).collect();
            let mut out = vec![0u64; n];
            let mut r = fast::Records::new(n);
            let (a, b) = text.as_bytes().split_at(text.find('\n').unwrap() + 1);
            assert!(r.feed(a, &mut out, value).is_some() && r.complete() == (n == 1), "n {n}");
            assert!(r.feed(b, &mut out, value).is_some() && r.complete(), "n {n}");
            assert!(out.iter().enumerate().all(|(v, &x)| x as usize == v * 3), "n {n}");
            for v in [0, 63, 64, n - 1].into_iter().filter(|&v| v < n) {
                let mut r = fast::Records::new(n);
                let again = format!("{text}{v} 1\n");
                assert!(r.feed(again.as_bytes(), &mut out, value).is_none(), "n {n}, vertex {v} again");
            }
        }
    }

    #[test]
    fn the_counter_writes_each_number_as_put_i64_does() {
        let mut c = lex::Counter::new();
        let mut buf = [0u8; lex::MAX_I64_LEN];
        for v in 0..1_200_000i64 {
            let len = lex::put_i64(&mut buf, v);
            assert_eq!(c.digits(), &buf[..len], "{v}");
            c.step();
        }
    }

    fn tmp_prefix(name: &str) -> (PathBuf, PathBuf) {
        let dir = std::env::temp_dir().join(format!("dyng-csr-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).ok();
        (dir.join("g"), dir)
    }

    /// Pieces end at a cut byte whatever the file's length; every byte is fed once, in order;
    /// a piece without a cut byte gives up.
    #[test]
    fn a_file_read_in_pieces_is_fed_whole_lines_in_order() {
        let (_, dir) = tmp_prefix("pieces");
        let path = dir.join("lines.txt");
        // Lines of varied length past three pieces, the last one without its newline.
        let mut text = Vec::new();
        let mut i = 0u64;
        while text.len() < 3 * (1 << 20) + 12_345 {
            text.extend_from_slice(format!("{i} {}\n", i * i % 1_000_003).as_bytes());
            i += 1;
        }
        text.extend_from_slice(b"7 8");
        std::fs::write(&path, &text).unwrap();
        let mut fed = Vec::new();
        let mut pieces = 0;
        let read = lex::read_pieces(&path, |b| b == b'\n', |piece| {
            assert!(piece.is_empty() || piece.ends_with(b"\n") || fed.len() + piece.len() == text.len());
            fed.extend_from_slice(piece);
            pieces += 1;
            Some(())
        });
        assert_eq!(read.unwrap(), Some(()));
        assert!(pieces >= 4, "{pieces} pieces");
        assert_eq!(fed, text);
        // A token longer than a piece: no byte to cut at.
        std::fs::write(&path, vec![b'9'; (1 << 20) + 10]).unwrap();
        assert_eq!(lex::read_pieces(&path, lex::is_space, |_| Some(())).unwrap(), None);
        // Giving up stops the reading; a missing file is an error naming it.
        std::fs::write(&path, &text).unwrap();
        let mut calls = 0;
        assert_eq!(lex::read_pieces(&path, |b| b == b'\n', |_| { calls += 1; None }).unwrap(), None);
        assert_eq!(calls, 1);
        let e = lex::read_pieces(&dir.join("none.txt"), lex::is_space, |_| Some(())).unwrap_err();
        assert!(e.to_string().contains("none.txt"), "{e}");
        std::fs::remove_dir_all(&dir).ok();
    }

    fn write3(prefix: &Path, rp: &str, ci: &str, val: &str) {
        let [a, b, c] = triplet_paths(prefix);
        std::fs::write(a, rp).ok();
        std::fs::write(b, ci).ok();
        std::fs::write(c, val).ok();
    }

    fn err_of(rp: &str, ci: &str, val: &str, name: &str) -> String {
        let (p, dir) = tmp_prefix(name);
        write3(&p, rp, ci, val);
        let r = read_csr_triplet(&p);
        std::fs::remove_dir_all(dir).ok();
        match r {
            Err(e) => e.to_string(),
            Ok(t) => panic!("expected an error, got {t:?}"),
        }
    }

    #[test]
    fn parse_i64_follows_from_chars() {
        assert_eq!(parse_i64(b"0"), Num::Int(0));
        assert_eq!(parse_i64(b"-17"), Num::Int(-17));
        assert_eq!(parse_i64(b"007"), Num::Int(7));
        assert_eq!(parse_i64(b"+1"), Num::NotNumber);
        assert_eq!(parse_i64(b"-"), Num::NotNumber);
        assert_eq!(parse_i64(b"1x"), Num::NotNumber);
        assert_eq!(parse_i64(b"-9223372036854775808"), Num::Int(i64::MIN));
        assert_eq!(parse_i64(b"9223372036854775808"), Num::Overflow);
    }

    #[test]
    fn push_i64_is_plain_decimal() {
        let mut out = Vec::new();
        let mut want = String::new();
        let values = [0, 7, -1, 9, 10, 99, 100, 101, 999, 1000, -10, -100, 1234567890123, i64::MIN, i64::MAX, i64::MIN + 1];
        // Every power of ten and its neighbours, of both signs.
        let powers = (0..19).flat_map(|e| {
            let p = 10i64.pow(e);
            [p - 1, p, p + 1, -p, 1 - p]
        });
        for v in values.into_iter().chain(powers) {
            push_i64(&mut out, v);
            out.push(b' ');
            want += &format!("{v} ");
        }
        assert_eq!(String::from_utf8(out).unwrap(), want);
    }

    #[test]
    fn round_trip_and_lenient_whitespace() {
        let (p, dir) = tmp_prefix("rt");
        write3(&p, "0 2\r\n\t3 3", "1\n2 0\n", "\n 4 5 \r\n\n1\t2\n3 4");
        let t = read_csr_triplet(&p).unwrap();
        assert_eq!((t.n, t.k), (3, 2));
        assert_eq!(t.row_ptr, vec![0, 2, 3, 3]);
        assert_eq!(t.col_ind, vec![1, 2, 0]);
        assert_eq!(t.weights, vec![4, 5, 1, 2, 3, 4]);
        write_csr_triplet(&p, &t).unwrap();
        let [a, b, c] = triplet_paths(&p);
        assert_eq!(std::fs::read_to_string(a).unwrap(), "0\n2\n3\n3\n");
        assert_eq!(std::fs::read_to_string(b).unwrap(), "1\n2\n0\n");
        assert_eq!(std::fs::read_to_string(c).unwrap(), "4 5\n1 2\n3 4\n");
        assert_eq!(read_csr_triplet(&p).unwrap(), t);
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn edgeless_graph_has_k_zero() {
        let (p, dir) = tmp_prefix("edgeless");
        write3(&p, "0\n0\n0\n", "", "");
        let t = read_csr_triplet(&p).unwrap();
        assert_eq!((t.n, t.k, t.weights.len()), (2, 0, 0));
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn errors_follow_the_original_order() {
        // Row-pointer range beats everything else.
        let e = err_of("0 -1", "x", "0", "o1");
        assert!(e.contains("CSR row pointer out of range"), "{e}");
        // Column range beats an unreadable RowPtr.
        let e = err_of("0 zz", "-3", "1", "o2");
        assert!(e.contains("CSR column index out of range"), "{e}");
        let e = err_of("0", "", "", "o3");
        assert!(e.contains("at least 2"), "{e}");
        let e = err_of("1 2", "0", "1", "o4");
        assert!(
            e.contains("CSR row pointers must start at 0") && e.contains(":1:1:"),
            "{e}"
        );
        let e = err_of("0 2\n1 2", "0 0", "1\n1", "o5");
        assert!(
            e.contains("CSR row pointers are not monotone") && e.contains(":2:1:"),
            "{e}"
        );
        let e = err_of("0 2 2", "0", "1\n1", "o6");
        assert!(
            e.contains("CSR column index file missing or size mismatch"),
            "{e}"
        );
        let e = err_of("0 1 1", "2", "0", "o7");
        assert!(
            e.contains("CSR column index out of range") && e.contains(":1:1:"),
            "{e}"
        );
        let e = err_of("0 1 1", "1", "0", "o8");
        assert!(e.contains("weights must be integers in [1, 2^31-1]"), "{e}");
        let e = err_of("0 2 2", "1 1", "1 2\n\n1", "o9");
        assert!(
            e.contains("Inconsistent number of objectives") && e.contains(":3:1:"),
            "{e}"
        );
        let e = err_of("0 2 2", "1 1", "1 2\n", "o10");
        assert!(e.contains("values size mismatch"), "{e}");
        let e = err_of("0 1 1", "1", "2147483648", "o11");
        assert!(e.contains("weights must be integers"), "{e}");
    }

    /// Small pseudo-random texts over the bytes the readers care about.
    fn texts() -> impl Iterator<Item = Vec<u8>> {
        let alphabet = b"0123456789 \t\r\n-xI";
        let mut x = 0x2545_f491_4f6c_dd1du64;
        (0..20_000).map(move |_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let len = (x % 24) as usize;
            (0..len)
                .map(|i| {
                    let r = x.rotate_left(i as u32 * 5) ^ (i as u64).wrapping_mul(0x9e37_79b9);
                    // Digits and spaces most of the time, so that many texts are well formed.
                    let pick = if r.is_multiple_of(4) { r / 4 % alphabet.len() as u64 } else { r / 4 % 11 };
                    alphabet[pick as usize]
                })
                .collect()
        })
    }

    #[test]
    fn a_token_read_eight_bytes_at_a_time_is_read_as_digit_by_digit() {
        // The digit loop alone, as the reader had it: the reference for every start and bound.
        fn by_digit(buf: &[u8], i: &mut usize, most: usize) -> Option<u64> {
            let start = *i;
            let mut v = 0u64;
            while let Some(d) = buf.get(*i).map(|b| b.wrapping_sub(b'0')).filter(|&d| d <= 9) {
                v = v.wrapping_mul(10).wrapping_add(d as u64);
                *i += 1;
            }
            let len = *i - start;
            (len > 0 && len <= most && fast::ends_token(buf, *i)).then_some(v)
        }
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut step = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut read = 0;
        for _ in 0..200_000 {
            let len = (step() % 30) as usize;
            // Mostly digits, then every byte value (those next to '0' and '9' included).
            let buf: Vec<u8> = (0..len)
                .map(|_| match step() % 8 {
                    0 => step() as u8,
                    1 => [b'/', b':', b' ', b'\n', 0x80, 0xff][step() as usize % 6],
                    _ => b'0' + (step() % 10) as u8,
                })
                .collect();
            let start = if len == 0 { 0 } else { (step() as usize) % len };
            let most = [1, 8, 10, 18, 19][step() as usize % 5];
            let (mut a, mut b) = (start, start);
            let got = fast::digits_up_to(&buf, &mut a, most);
            assert_eq!((got, a), (by_digit(&buf, &mut b, most), b), "{buf:?} from {start}, at most {most}");
            read += got.is_some() as usize;
        }
        assert!(read > 20_000, "{read} tokens read");
    }

    #[test]
    fn the_fast_integer_path_takes_only_what_the_general_one_reads_alike() {
        let (mut taken, mut left) = (0, 0);
        for t in texts() {
            let mut fast_out = Vec::new();
            let slow: Option<Vec<i32>> = Tokens::new(&t)
                .map(|tok| match parse_i64(tok.text) {
                    Num::Int(v) if (0..=I32_MAX).contains(&v) => Some(v as i32),
                    _ => None,
                })
                .collect();
            match fast::ints(&t, I32_MAX as u64, &mut fast_out) {
                Some(()) => {
                    taken += 1;
                    assert_eq!(Some(fast_out), slow, "{:?}", String::from_utf8_lossy(&t));
                }
                None => left += 1,
            }
        }
        assert!(taken > 1000 && left > 1000, "{taken} taken, {left} left to the general path");
    }

    #[test]
    fn the_fast_values_path_takes_only_what_the_general_one_reads_alike() {
        let mut taken = 0;
        for t in texts() {
            let mut w = Vec::new();
            if let Some((k, lines)) = fast::values(&t, &mut w) {
                taken += 1;
                // The general path, on the same bytes.
                let buf = t.clone();
                let slow = {
                    let mut vals = Values { k: 0, weights: Vec::new(), lines: 0 };
                    let mut ok = true;
                    for (_, line) in lex::lines(&buf) {
                        let before = vals.weights.len();
                        for (_, tok) in lex::line_tokens(line) {
                            match parse_i64(tok) {
                                Num::Int(x) if (1..=I32_MAX).contains(&x) => vals.weights.push(x as i32),
                                _ => ok = false,
                            }
                        }
                        let c = vals.weights.len() - before;
                        if c > 0 {
                            if vals.lines == 0 {
                                vals.k = c;
                            } else if c != vals.k {
                                ok = false;
                            }
                            vals.lines += 1;
                        }
                    }
                    ok.then_some(vals)
                };
                let slow = slow.unwrap_or_else(|| panic!("{:?}", String::from_utf8_lossy(&t)));
                assert_eq!((k, lines, &w), (slow.k, slow.lines, &slow.weights), "{:?}", String::from_utf8_lossy(&t));
            }
        }
        assert!(taken > 1000, "{taken}");
    }

    /// The graph [`read_graph_and`] reads, checking that its `then` ran once, with the graph's n
    /// and K (alongside the read where the fast path took the files, after it elsewhere).
    fn read_graph(p: &Path, k: Option<usize>) -> Result<Graph> {
        let calls = std::sync::atomic::AtomicUsize::new(0);
        let (g, seen, _) = read_graph_and(p, k, |n, kg| {
            calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            (n, kg)
        })?;
        assert_eq!((seen, calls.into_inner()), ((g.n(), g.k()), 1));
        Ok(g)
    }

    #[test]
    fn read_csr_is_the_triplet_made_a_csr() {
        let (p, dir) = tmp_prefix("read-csr");
        write3(&p, "0 2\r\n\t3 3", "1\n2 0\n", "\n 4 5 \r\n\n1\t2\n3 4");
        let t = read_csr_triplet(&p).unwrap();
        let want = Csr::from_arrays(t.n, t.k, t.row_ptr, t.col_ind, &t.weights, crate::graph::WeightLayout::EdgeMajor).unwrap();
        assert_eq!(read_csr(&p, None).unwrap(), want);
        // The graph takes the fast path's columns over: the same graph as from the CSR, with
        // each column's room, and the same facts.
        let g = read_graph(&p, None).unwrap();
        assert_eq!(g.to_csr(), want);
        assert_eq!(g.row_bytes(), Graph::new(want.clone()).row_bytes());
        assert_eq!((0..2).map(|j| g.max_weight(j)).collect::<Vec<_>>(), [4, 5]);
        // The general path: a leading-sign token the fast path leaves to it.
        write3(&p, "-0 2\n3 3", "1\n2 0\n", "4 5\n1 2\n3 4");
        assert_eq!(read_csr(&p, None).unwrap(), want);
        assert_eq!(read_graph(&p, None).unwrap().to_csr(), want);
        // Errors are the general path's.
        write3(&p, "0 2 3 3", "1 2 7", "4 5\n1 2\n3 4");
        let e = read_csr(&p, None).unwrap_err().to_string();
        assert!(e.contains("CSR column index out of range") && e.contains(":1:5:"), "{e}");
        write3(&p, "0 0 0", "", "");
        assert!(read_csr(&p, None).unwrap_err().to_string().contains("pass -k K"));
        let g = read_csr(&p, Some(2)).unwrap();
        assert_eq!((g.n(), g.m(), g.k()), (2, 0, 2));
        let g = read_graph(&p, Some(2)).unwrap();
        assert_eq!((g.n(), g.m(), g.k()), (2, 0, 2));
        std::fs::remove_dir_all(dir).ok();
    }

    /// A Values file large enough to be parsed in two halves gives what the general path reads,
    /// blank lines and all, and its errors, wherever in the file they are.
    #[test]
    fn a_large_values_file_read_in_two_halves_is_the_triplet() {
        let (p, dir) = tmp_prefix("halves");
        let m = SPLIT_VALUES_FROM / 8 + 1000;
        let n = 1000;
        let rp: Vec<String> = (0..=n).map(|v| (v * m / n).to_string()).collect();
        let ci: Vec<String> = (0..m).map(|e| ((e * 7919) % n).to_string()).collect();
        let mut values = String::new();
        for e in 0..m {
            // Blank lines here and there, a blank-only one near the middle, a last line without
            // its newline.
            if e % 100_003 == 5 || e == m / 2 {
                values.push_str(if e == m / 2 { " \t\n" } else { "\n" });
            }
            values.push_str(&format!("{} {} {}", 1 + e % 97, 1 + e % 89, 1 + (e * 31) % 1_000_003));
            if e + 1 < m {
                values.push('\n');
            }
        }
        assert!(values.len() >= SPLIT_VALUES_FROM);
        write3(&p, &rp.join(" "), &ci.join("\n"), &values);
        let t = read_csr_triplet(&p).unwrap();
        let want = Csr::from_arrays(t.n, t.k, t.row_ptr, t.col_ind, &t.weights, crate::graph::WeightLayout::EdgeMajor).unwrap();
        assert_eq!(read_csr(&p, None).unwrap(), want);
        assert_eq!(read_graph(&p, None).unwrap().to_csr(), want);
        // Taken by the fast path itself (not left to the general one).
        let fast = read_triplet_fast::<()>(&p, None, None).0.expect("the fast path takes the file");
        assert_eq!(fast.columns.len(), 3);
        for (j, col) in fast.columns.iter().enumerate() {
            assert_eq!(&col[..], want.column(j), "column {j}");
            // The halves' facts, merged, are the column's.
            assert_eq!(fast.facts[j], ColumnFacts::of(want.column(j).iter().copied()), "column {j}");
        }
        // A bad weight or a short line in the second half, and too few lines: the general
        // path's errors.
        for (at, bad) in [(m - 10, "0 1 1"), (3 * m / 4, "1 1"), (m / 4, "1 1 1 1")] {
            let mut lines: Vec<&str> = values.split('\n').collect();
            let keep = lines.len() - (m - at);
            lines[keep] = bad;
            let text = lines.join("\n");
            write3(&p, &rp.join(" "), &ci.join("\n"), &text);
            let slow = read_csr_slow(&p, None).unwrap_err().to_string();
            assert_eq!(read_csr(&p, None).unwrap_err().to_string(), slow, "{bad} at line {at}");
        }
        let short: Vec<&str> = values.split('\n').collect();
        write3(&p, &rp.join(" "), &ci.join("\n"), &short[..short.len() - 3].join("\n"));
        assert_eq!(read_csr(&p, None).unwrap_err().to_string(), read_csr_slow(&p, None).unwrap_err().to_string());
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn missing_file_names_it() {
        let (p, dir) = tmp_prefix("missing");
        let e = read_csr_triplet(&p).unwrap_err().to_string();
        assert!(e.contains("RowPtr.txt"), "{e}");
        std::fs::remove_dir_all(dir).ok();
    }
}
