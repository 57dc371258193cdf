//! A minimal DER reader for the few private-key structures we look inside (PKCS#1, SEC1,
//! PKCS#8). Certificates go through x509-parser; these formats it does not cover.

/// One tag-length-value element: `raw` is the whole element, `value` its content.
#[derive(Clone, Copy)]
pub struct Tlv<'a> {
    pub tag: u8,
    pub value: &'a [u8],
    pub raw: &'a [u8],
}

/// Reads one element from the front of `input`; returns it and the rest.
/// Only single-byte tags and definite lengths, which is all DER keys use.
pub fn read_tlv(input: &[u8]) -> Option<(Tlv<'_>, &[u8])> {
    let tag = *input.first()?;
    let first = *input.get(1)? as usize;
    let (len, header) = if first < 0x80 {
        (first, 2)
    } else {
        let n = first & 0x7F;
        if n == 0 || n > 4 {
            return None;
        }
        let bytes = input.get(2..2 + n)?;
        (
            bytes.iter().fold(0usize, |a, b| (a << 8) | *b as usize),
            2 + n,
        )
    };
    let end = header.checked_add(len)?;
    let value = input.get(header..end)?;
    Some((
        Tlv {
            tag,
            value,
            raw: &input[..end],
        },
        &input[end..],
    ))
}

/// The elements of a SEQUENCE that fills `input` exactly.
pub fn sequence_items(input: &[u8]) -> Option<Vec<Tlv<'_>>> {
    let (seq, rest) = read_tlv(input)?;
    if seq.tag != 0x30 || !rest.is_empty() {
        return None;
    }
    let mut items = Vec::new();
    let mut cur = seq.value;
    while !cur.is_empty() {
        let (item, next) = read_tlv(cur)?;
        items.push(item);
        cur = next;
    }
    Some(items)
}

/// Encodes one element: tag, DER length, content.
pub fn tlv(tag: u8, content: &[u8]) -> Vec<u8> {
    let mut out = vec![tag];
    let len = content.len();
    if len < 0x80 {
        out.push(len as u8);
    } else {
        let bytes: Vec<u8> = len
            .to_be_bytes()
            .iter()
            .copied()
            .skip_while(|b| *b == 0)
            .collect();
        out.push(0x80 | bytes.len() as u8);
        out.extend(bytes);
    }
    out.extend_from_slice(content);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_short_and_long_lengths() {
        let short = [0x30, 0x03, 0x02, 0x01, 0x05];
        let items = sequence_items(&short).unwrap();
        assert_eq!(items[0].value, [5]);
        let mut long = vec![0x04, 0x81, 0x80];
        long.extend([7u8; 0x80]);
        let (t, rest) = read_tlv(&long).unwrap();
        assert_eq!((t.tag, t.value.len(), rest.len()), (0x04, 0x80, 0));
    }

    #[test]
    fn tlv_round_trips() {
        for n in [0usize, 5, 0x7F, 0x80, 300, 70_000] {
            let content = vec![1u8; n];
            let enc = tlv(0x04, &content);
            let (t, rest) = read_tlv(&enc).unwrap();
            assert_eq!((t.value.len(), rest.len()), (n, 0));
        }
    }

    #[test]
    fn truncated_input_is_none() {
        assert!(read_tlv(&[0x30, 0x05, 0x00]).is_none());
        assert!(read_tlv(&[0x30, 0x85, 0, 0, 0, 0, 1]).is_none());
        assert!(sequence_items(&[0x02, 0x01, 0x00]).is_none());
    }
}
