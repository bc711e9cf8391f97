//! A minimal protobuf wire-format encoder: varints, fixed64, doubles, length-delimited bytes and
//! nested messages, appended to one reusable buffer.
//!
//! What it writes: canonical encodings (shortest varints, nested lengths patched in place once
//! the nested message is complete). What it leaves out: decoding, zig-zag (`sint*`) fields,
//! packed repeated fields, groups and 32-bit fixed types, none of which the trace writers need.

/// Wire type of varint fields (`int32`, `int64`, `uint64`, `bool`, enums).
const WIRE_VARINT: u32 = 0;
/// Wire type of 64-bit fixed fields (`fixed64`, `double`).
const WIRE_I64: u32 = 1;
/// Wire type of length-delimited fields (strings, bytes, nested messages).
const WIRE_LEN: u32 = 2;

/// An open nested message: the offset of its (provisional, one-byte) length.
#[must_use = "a nested message must be closed with ProtoBuf::end"]
pub(crate) struct Nested(usize);

/// A reusable encode buffer. Clearing keeps the capacity, so steady-state encoding does not
/// allocate.
#[derive(Debug, Default)]
pub(crate) struct ProtoBuf {
    buf: Vec<u8>,
}

impl ProtoBuf {
    /// Empties the buffer, keeping its capacity.
    pub(crate) fn clear(&mut self) {
        self.buf.clear();
    }

    /// The bytes encoded so far.
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.buf
    }

    fn raw_varint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.buf.push((v as u8) | 0x80);
            v >>= 7;
        }
        self.buf.push(v as u8);
    }

    fn tag(&mut self, field: u32, wire: u32) {
        self.raw_varint(u64::from(field << 3 | wire));
    }

    /// A varint field (`uint64`, `uint32`, `bool`, enum; `int64` as its two's complement).
    pub(crate) fn varint(&mut self, field: u32, v: u64) {
        self.tag(field, WIRE_VARINT);
        self.raw_varint(v);
    }

    /// A `fixed64` field: 8 little-endian bytes.
    pub(crate) fn fixed64(&mut self, field: u32, v: u64) {
        self.tag(field, WIRE_I64);
        self.buf.extend_from_slice(&v.to_le_bytes());
    }

    /// A `double` field: the IEEE-754 bits, little-endian.
    pub(crate) fn double(&mut self, field: u32, v: f64) {
        self.fixed64(field, v.to_bits());
    }

    /// A `string` or `bytes` field.
    pub(crate) fn bytes_field(&mut self, field: u32, v: &[u8]) {
        self.tag(field, WIRE_LEN);
        self.raw_varint(v.len() as u64);
        self.buf.extend_from_slice(v);
    }

    /// Opens a nested message in `field`; close it with [`ProtoBuf::end`] (LIFO).
    pub(crate) fn begin(&mut self, field: u32) -> Nested {
        self.tag(field, WIRE_LEN);
        self.buf.push(0);
        Nested(self.buf.len() - 1)
    }

    /// Closes a nested message, writing its length. Lengths of 128 bytes or more need a longer
    /// varint, so the body is shifted right to make room (rare for trace packets).
    pub(crate) fn end(&mut self, nested: Nested) {
        let at = nested.0;
        let len = self.buf.len() - at - 1;
        if len < 0x80 {
            self.buf[at] = len as u8;
            return;
        }
        let mut digits = [0u8; 10];
        let mut n = 0;
        let mut v = len as u64;
        while v >= 0x80 {
            digits[n] = (v as u8) | 0x80;
            v >>= 7;
            n += 1;
        }
        digits[n] = v as u8;
        n += 1;
        let body = at + 1;
        let old_end = self.buf.len();
        self.buf.resize(old_end + n - 1, 0);
        self.buf.copy_within(body..old_end, body + n - 1);
        self.buf[at..at + n].copy_from_slice(&digits[..n]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_are_canonical() {
        let mut pb = ProtoBuf::default();
        pb.varint(1, 0);
        pb.varint(1, 127);
        pb.varint(1, 128);
        pb.varint(1, u64::MAX);
        let mut want = vec![0x08, 0x00, 0x08, 0x7f, 0x08, 0x80, 0x01, 0x08];
        want.extend_from_slice(&[0xff; 9]);
        want.push(0x01);
        assert_eq!(pb.bytes(), &want[..]);
    }

    #[test]
    fn fixed64_and_double_are_little_endian() {
        let mut pb = ProtoBuf::default();
        pb.fixed64(47, 0x0102_0304_0506_0708);
        // Field 47, wire type 1: (47 << 3 | 1) = 377 = 0xf9 0x02.
        assert_eq!(pb.bytes(), &[0xf9, 0x02, 8, 7, 6, 5, 4, 3, 2, 1]);
        pb.clear();
        pb.double(44, 1.0);
        assert_eq!(pb.bytes(), &[0xe1, 0x02, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f]);
    }

    #[test]
    fn long_nested_messages_get_multibyte_lengths() {
        let mut pb = ProtoBuf::default();
        let outer = pb.begin(1);
        let inner = pb.begin(2);
        pb.bytes_field(3, &[0xaa; 200]);
        pb.end(inner);
        pb.varint(4, 1);
        pb.end(outer);
        let b = pb.bytes();
        // outer: tag, len = 1 (tag) + 2 (len) + 203 (inner body) + 2 (field 4) = 208.
        assert_eq!(&b[..3], &[0x0a, 0xd0, 0x01]);
        // inner: tag, len 203 = 2 bytes.
        assert_eq!(&b[3..6], &[0x12, 0xcb, 0x01]);
        assert_eq!(&b[6..9], &[0x1a, 0xc8, 0x01]);
        assert_eq!(&b[b.len() - 2..], &[0x20, 0x01]);
        assert_eq!(b.len(), 3 + 208);
    }
}
