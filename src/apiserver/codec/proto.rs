//! Just enough protobuf to read what kubectl 1.32+ sends as `application/vnd.kubernetes.protobuf`:
//! the `k8s\0` envelope (runtime.Unknown) and the fields of the review types inside it; the
//! schema vocabulary (`Ty`, `Msg`) the generated tables are written in; and the one writer the
//! OpenAPI v2 document needs.

/// A decoded protobuf message: (field number, value) pairs in wire order.
#[derive(Debug, Default)]
pub struct Message<'a> {
    fields: Vec<(u64, Field<'a>)>,
}

#[derive(Debug, Clone, Copy)]
pub enum Field<'a> {
    Varint(u64),
    Bytes(&'a [u8]),
    Fixed,
}

pub(crate) fn read_varint(buf: &[u8], pos: &mut usize) -> Option<u64> {
    let mut v: u64 = 0;
    for shift in (0..64).step_by(7) {
        let b = *buf.get(*pos)?;
        *pos += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

impl<'a> Message<'a> {
    pub fn parse(buf: &'a [u8]) -> Option<Self> {
        let mut pos = 0;
        let mut fields = Vec::new();
        while pos < buf.len() {
            let tag = read_varint(buf, &mut pos)?;
            let (num, wire) = (tag >> 3, tag & 7);
            let f = match wire {
                0 => Field::Varint(read_varint(buf, &mut pos)?),
                1 => {
                    pos = pos.checked_add(8)?;
                    Field::Fixed
                }
                2 => {
                    let len = usize::try_from(read_varint(buf, &mut pos)?).ok()?;
                    let end = pos.checked_add(len)?;
                    let s = buf.get(pos..end)?;
                    pos = end;
                    Field::Bytes(s)
                }
                5 => {
                    pos = pos.checked_add(4)?;
                    Field::Fixed
                }
                _ => return None,
            };
            fields.push((num, f));
        }
        if pos > buf.len() {
            return None;
        }
        Some(Message { fields })
    }

    /// Every occurrence of a field, in wire order (repeated fields, map entries).
    pub fn all(&self, num: u64) -> impl Iterator<Item = Field<'a>> + '_ {
        self.fields
            .iter()
            .filter(move |(n, _)| *n == num)
            .map(|(_, f)| *f)
    }

    pub fn bytes(&self, num: u64) -> Option<&'a [u8]> {
        self.fields.iter().rev().find_map(|(n, f)| match f {
            Field::Bytes(b) if *n == num => Some(*b),
            _ => None,
        })
    }

    pub fn string(&self, num: u64) -> String {
        self.bytes(num)
            .map(|b| String::from_utf8_lossy(b).into_owned())
            .unwrap_or_default()
    }

    pub fn message(&self, num: u64) -> Option<Message<'a>> {
        self.bytes(num).and_then(Message::parse)
    }
}

/// The envelope: (apiVersion, kind, raw object bytes).
pub fn unwrap_envelope(body: &[u8]) -> Option<(String, String, &[u8])> {
    let rest = body.strip_prefix(b"k8s\0")?;
    let unknown = Message::parse(rest)?;
    let type_meta = unknown.message(1).unwrap_or_default();
    Some((
        type_meta.string(1),
        type_meta.string(2),
        unknown.bytes(2).unwrap_or_default(),
    ))
}

/// A varint as the wire writes it.
fn varint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// A length-delimited field (strings, bytes, sub-messages).
pub(crate) fn ld(field: u64, data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len() + 4);
    varint((field << 3) | 2, &mut out);
    varint(data.len() as u64, &mut out);
    out.extend_from_slice(data);
    out
}

/// How one field is written on the wire and read into JSON.
#[derive(Clone, Copy)]
pub(crate) enum Ty {
    Str,
    /// int32 or int64 (varint; an int32 below zero is sign-extended to ten bytes).
    Int,
    Bool,
    /// `bytes` (a Secret's data): base64 in JSON, as Go encodes a `[]byte`.
    Bytes,
    /// `metav1.Time`: whole seconds, RFC 3339.
    Time,
    /// `metav1.MicroTime`: RFC 3339 with microseconds.
    MicroTime,
    /// `resource.Quantity`: its string form.
    Quantity,
    /// `intstr.IntOrString`: a number or a string.
    IntOrString,
    /// `runtime.RawExtension`, `metav1.FieldsV1`: JSON bytes embedded as they are.
    RawJson,
    /// `ExtraValue`: a message around a string list, a plain list in JSON.
    Items,
    List(&'static Ty),
    Map(&'static Ty),
    Msg(&'static Msg),
    Msgs(&'static Msg),
    /// A Go struct embedded with `json:",inline"` (a Volume's VolumeSource, a Probe's
    /// ProbeHandler): its own message on the wire, its fields the parent's in JSON.
    Inline(&'static Msg),
}

/// One message: its name (for errors) and its fields as (number, JSON name, type).
pub(crate) struct Msg {
    pub name: &'static str,
    pub fields: &'static [(u64, &'static str, Ty)],
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ld(num: u8, data: &[u8]) -> Vec<u8> {
        let mut v = vec![(num << 3) | 2, data.len() as u8];
        v.extend_from_slice(data);
        v
    }

    #[test]
    fn envelope_with_ssar() {
        let attrs = [ld(1, b"kube-system"), ld(2, b"create"), ld(5, b"pods")].concat();
        let spec = ld(1, &attrs);
        let ssar = [ld(1, b""), ld(2, &spec)].concat();
        let tm = [
            ld(1, b"authorization.k8s.io/v1"),
            ld(2, b"SelfSubjectAccessReview"),
        ]
        .concat();
        let body = [b"k8s\0".to_vec(), ld(1, &tm), ld(2, &ssar)].concat();
        let (av, kind, raw) = unwrap_envelope(&body).unwrap_or_default();
        assert_eq!(
            (av.as_str(), kind.as_str()),
            ("authorization.k8s.io/v1", "SelfSubjectAccessReview")
        );
        let m = Message::parse(raw)
            .and_then(|m| m.message(2))
            .and_then(|s| s.message(1))
            .unwrap_or_default();
        assert_eq!(
            (m.string(1), m.string(2), m.string(5)),
            ("kube-system".into(), "create".into(), "pods".into())
        );
        assert!(unwrap_envelope(b"k8s\0\x0a\xff").is_none());
    }
}
