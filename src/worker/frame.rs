//! DRWP/1 framing: the 40-byte record header and the little-endian field codecs of the bodies.
//!
//! Every message is one SEQPACKET record (header, packed body, optional fds). Decoding checks the
//! magic, the version, the lengths and the fd count before a body is looked at; anything wrong is a
//! protocol error, never a panic.

use crate::error::{Error, Result};

pub const MAGIC: [u8; 4] = *b"DYNG";
pub const PROTO_MAJOR: u8 = 1;
pub const PROTO_MINOR: u8 = 0;
pub const HEADER_LEN: usize = 40;
/// Header plus body of one record.
pub const MAX_FRAME: usize = 64 * 1024;
pub const MAX_FDS: usize = 8;
pub const FLAG_IGNORABLE: u16 = 1;
pub const FLAG_HAS_TLV: u16 = 2;

/// A protocol violation with what was wrong.
pub fn protocol(msg: impl Into<String>) -> Error {
    Error::Protocol(format!("dyng worker: protocol error: {}", msg.into()))
}

/// The fixed record header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Header {
    pub msg_type: u16,
    pub flags: u16,
    pub body_len: u32,
    pub spawn_id: u64,
    pub generation: u32,
    pub n_fds: u8,
    pub call_id: u64,
}

impl Header {
    pub fn encode(&self) -> [u8; HEADER_LEN] {
        let mut e = Enc::default();
        e.bytes(&MAGIC);
        e.u8(PROTO_MAJOR);
        e.u8(PROTO_MINOR);
        e.u16(HEADER_LEN as u16);
        e.u16(self.msg_type);
        e.u16(self.flags);
        e.u32(self.body_len);
        e.u64(self.spawn_id);
        e.u32(self.generation);
        e.u8(self.n_fds);
        e.bytes(&[0; 3]);
        e.u64(self.call_id);
        let mut out = [0u8; HEADER_LEN];
        out.copy_from_slice(&e.0);
        out
    }
}

/// Builds one record: header (with `body_len` and `n_fds` filled in) followed by `body`.
pub fn encode_frame(mut h: Header, body: &[u8], n_fds: usize) -> Result<Vec<u8>> {
    if HEADER_LEN + body.len() > MAX_FRAME || n_fds > MAX_FDS {
        return Err(Error::Internal(format!(
            "dyng worker: a frame of {} bytes with {n_fds} fds exceeds the limits",
            HEADER_LEN + body.len()
        )));
    }
    h.body_len = body.len() as u32;
    h.n_fds = n_fds as u8;
    let mut out = Vec::with_capacity(HEADER_LEN + body.len());
    out.extend_from_slice(&h.encode());
    out.extend_from_slice(body);
    Ok(out)
}

/// Checks a received record and splits it into header and body. `fds_received` is the number of
/// fds that arrived with it (the caller has already taken ownership of them, so they are closed on
/// every path).
pub fn decode_frame(buf: &[u8], fds_received: usize) -> Result<(Header, &[u8])> {
    if buf.len() < HEADER_LEN {
        return Err(protocol(format!("record of {} bytes is shorter than a header", buf.len())));
    }
    let mut d = Dec::new(buf);
    let magic = d.array::<4>()?;
    if magic != MAGIC {
        return Err(protocol(format!("bad magic {magic:02x?}")));
    }
    let major = d.u8()?;
    if major != PROTO_MAJOR {
        return Err(protocol(format!("protocol major {major}, want {PROTO_MAJOR}")));
    }
    let _minor = d.u8()?;
    let header_len = d.u16()? as usize;
    if !(HEADER_LEN..=MAX_FRAME).contains(&header_len) || header_len > buf.len() {
        return Err(protocol(format!("header_len {header_len} is invalid")));
    }
    let msg_type = d.u16()?;
    let flags = d.u16()?;
    if flags & !(FLAG_IGNORABLE | FLAG_HAS_TLV) != 0 {
        return Err(protocol(format!("unknown flags {flags:#x}")));
    }
    let body_len = d.u32()?;
    let spawn_id = d.u64()?;
    let generation = d.u32()?;
    let n_fds = d.u8()?;
    let reserved = d.array::<3>()?;
    let call_id = d.u64()?;
    if reserved != [0; 3] {
        return Err(protocol("reserved header bytes are not 0"));
    }
    if header_len + body_len as usize != buf.len() || buf.len() > MAX_FRAME {
        return Err(protocol(format!(
            "record is {} bytes, header says {}",
            buf.len(),
            header_len + body_len as usize
        )));
    }
    if n_fds as usize != fds_received || fds_received > MAX_FDS {
        return Err(protocol(format!("header announces {n_fds} fds, {fds_received} arrived")));
    }
    let h = Header { msg_type, flags, body_len, spawn_id, generation, n_fds, call_id };
    Ok((h, &buf[header_len..]))
}

/// The fd count a record's header announces (0 if the record is too short to say), for a
/// record received with `MSG_CTRUNC`: its fds were dropped by the kernel, so the count that
/// arrived says nothing about whether the message itself is valid (3).
pub fn announced_fds(buf: &[u8]) -> usize {
    buf.get(28).map_or(0, |n| *n as usize)
}

/// Little-endian writer of packed bodies.
#[derive(Debug, Default, Clone)]
pub struct Enc(pub Vec<u8>);

impl Enc {
    pub fn u8(&mut self, v: u8) -> &mut Self {
        self.0.push(v);
        self
    }
    pub fn u16(&mut self, v: u16) -> &mut Self {
        self.bytes(&v.to_le_bytes())
    }
    pub fn u32(&mut self, v: u32) -> &mut Self {
        self.bytes(&v.to_le_bytes())
    }
    pub fn u64(&mut self, v: u64) -> &mut Self {
        self.bytes(&v.to_le_bytes())
    }
    pub fn i32(&mut self, v: i32) -> &mut Self {
        self.bytes(&v.to_le_bytes())
    }
    pub fn i64(&mut self, v: i64) -> &mut Self {
        self.bytes(&v.to_le_bytes())
    }
    pub fn bytes(&mut self, b: &[u8]) -> &mut Self {
        self.0.extend_from_slice(b);
        self
    }
}

/// Little-endian reader of packed bodies; reading past the end is a protocol error.
#[derive(Debug)]
pub struct Dec<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Dec<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Dec { buf, pos: 0 }
    }
    pub fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if self.buf.len() - self.pos < n {
            return Err(protocol(format!(
                "body ends at byte {}, {n} more bytes expected at {}",
                self.buf.len(),
                self.pos
            )));
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }
    pub fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }
    pub fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }
    pub fn u16(&mut self) -> Result<u16> {
        Ok(u16::from_le_bytes(self.array()?))
    }
    pub fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_le_bytes(self.array()?))
    }
    pub fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_le_bytes(self.array()?))
    }
    pub fn i32(&mut self) -> Result<i32> {
        Ok(i32::from_le_bytes(self.array()?))
    }
    pub fn i64(&mut self) -> Result<i64> {
        Ok(i64::from_le_bytes(self.array()?))
    }
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }
    pub fn rest(&mut self) -> &'a [u8] {
        let s = &self.buf[self.pos..];
        self.pos = self.buf.len();
        s
    }
    /// Fails when bytes are left that no field claimed.
    pub fn finish(&self) -> Result<()> {
        if self.remaining() != 0 {
            return Err(protocol(format!("{} unexpected trailing body bytes", self.remaining())));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Header {
        Header { msg_type: 0x10, flags: 0, body_len: 0, spawn_id: 7, generation: 2, n_fds: 0, call_id: 99 }
    }

    #[test]
    fn header_layout_is_pinned() {
        let f = encode_frame(sample(), &[1, 2, 3], 1).unwrap();
        assert_eq!(&f[0..4], b"DYNG");
        assert_eq!(f[4], 1);
        assert_eq!(u16::from_le_bytes([f[6], f[7]]), 40);
        assert_eq!(u16::from_le_bytes([f[8], f[9]]), 0x10);
        assert_eq!(u32::from_le_bytes(f[12..16].try_into().unwrap()), 3);
        assert_eq!(u64::from_le_bytes(f[16..24].try_into().unwrap()), 7);
        assert_eq!(u32::from_le_bytes(f[24..28].try_into().unwrap()), 2);
        assert_eq!(f[28], 1);
        assert_eq!(u64::from_le_bytes(f[32..40].try_into().unwrap()), 99);
        let (h, body) = decode_frame(&f, 1).unwrap();
        assert_eq!(body, &[1, 2, 3]);
        assert_eq!(h, Header { body_len: 3, n_fds: 1, ..sample() });
    }

    #[test]
    fn malformed_records_are_protocol_errors() {
        let good = encode_frame(sample(), &[0; 8], 0).unwrap();
        let is_protocol = |b: &[u8], fds| {
            decode_frame(b, fds).map(|_| ()).unwrap_err().kind() == crate::ErrorKind::Protocol
        };
        assert!(is_protocol(&good[..39], 0), "short");
        assert!(is_protocol(&good[..44], 0), "truncated body");
        assert!(is_protocol(&good, 1), "fd count");
        let mut bad = good.clone();
        bad[0] = b'X';
        assert!(is_protocol(&bad, 0), "magic");
        let mut bad = good.clone();
        bad[4] = 2;
        assert!(is_protocol(&bad, 0), "major");
        let mut bad = good.clone();
        bad[10] = 0x80;
        assert!(is_protocol(&bad, 0), "flags");
        let mut bad = good.clone();
        bad[30] = 1;
        assert!(is_protocol(&bad, 0), "reserved");
        let mut bad = good.clone();
        bad.push(0);
        assert!(is_protocol(&bad, 0), "extra byte");
        assert!(encode_frame(sample(), &vec![0; MAX_FRAME], 0).is_err());
    }

    #[test]
    fn decoder_never_panics_on_arbitrary_bytes() {
        // A cheap deterministic fuzz: every prefix and single-byte mutation of a valid frame.
        let good = encode_frame(sample(), &[5; 16], 0).unwrap();
        for len in 0..good.len() {
            let _ = decode_frame(&good[..len], 0);
        }
        for i in 0..good.len() {
            for v in [0u8, 1, 0x7f, 0xff] {
                let mut b = good.clone();
                b[i] = v;
                let _ = decode_frame(&b, 0);
            }
        }
    }
}
