//! Incremental parsing of backend messages out of a reusable buffer.
//!
//! The engine reads whatever the socket has into a [`MessageReader`] and pops complete
//! messages; a partial message stays buffered until more bytes arrive
//! (`Message::parse` returns `Ok(None)`). Each message is a cheap `Bytes` view of the
//! buffer, so steady state allocates nothing per message. Malformed bytes are an
//! [`Error::Protocol`], never a panic, and an absurd length header is rejected before any
//! allocation.

use bytes::{Buf, BytesMut};
use postgres_protocol::message::backend::Message;

use crate::error::Error;

/// Largest backend message accepted by default (1 GiB + headroom, like the server's
/// own limits on a single field).
pub const DEFAULT_MAX_MESSAGE_LEN: usize = (1 << 30) + (1 << 20);

/// Initial capacity and minimum free space kept before a read.
pub const READ_CHUNK: usize = 16 * 1024;

/// A reusable inbound buffer plus the parser.
#[derive(Debug)]
pub struct MessageReader {
    buf: BytesMut,
    max_len: usize,
}

impl Default for MessageReader {
    fn default() -> Self {
        MessageReader::new()
    }
}

impl MessageReader {
    /// Empty reader with [`READ_CHUNK`] capacity.
    pub fn new() -> MessageReader {
        MessageReader {
            buf: BytesMut::with_capacity(READ_CHUNK),
            max_len: DEFAULT_MAX_MESSAGE_LEN,
        }
    }

    /// Rejects messages longer than `max_len` bytes as protocol errors.
    pub fn with_max_message_len(mut self, max_len: usize) -> MessageReader {
        self.max_len = max_len;
        self
    }

    /// The raw inbound buffer (append bytes read from the socket here).
    pub fn buffer_mut(&mut self) -> &mut BytesMut {
        &mut self.buf
    }

    /// Bytes buffered and not yet parsed.
    pub fn buffered(&self) -> usize {
        self.buf.len()
    }

    /// Appends raw bytes (tests and non-socket sources).
    pub fn extend(&mut self, data: &[u8]) {
        self.buf.extend_from_slice(data);
    }

    /// True if a complete message is buffered (so `next_message` will not return `None`).
    pub fn has_complete_message(&self) -> bool {
        if self.buf.len() < 5 {
            return false;
        }
        let len = u32::from_be_bytes([self.buf[1], self.buf[2], self.buf[3], self.buf[4]]);
        self.buf.len() > len as usize
    }

    /// The tag byte of the next buffered message, if at least one byte is buffered.
    pub fn peek_tag(&self) -> Option<u8> {
        self.buf.first().copied()
    }

    /// Pops the next complete message; `Ok(None)` if more bytes are needed.
    #[inline]
    pub fn next_message(&mut self) -> Result<Option<Message>, Error> {
        if self.buf.len() >= 5 {
            let len = u32::from_be_bytes([self.buf[1], self.buf[2], self.buf[3], self.buf[4]]);
            if (len as usize) < 4 || len as usize > self.max_len {
                return Err(Error::Protocol(format!(
                    "invalid message length {len} (tag {:?})",
                    self.buf[0] as char
                )));
            }
            if len == 4 {
                // Acknowledgements without a body (one per command: BindComplete...) are
                // popped here; Message::parse would split and share the buffer for each.
                let bodiless = match self.buf[0] {
                    b'1' => Some(Message::ParseComplete),
                    b'2' => Some(Message::BindComplete),
                    b'3' => Some(Message::CloseComplete),
                    b'n' => Some(Message::NoData),
                    b'I' => Some(Message::EmptyQueryResponse),
                    b's' => Some(Message::PortalSuspended),
                    _ => None,
                };
                if bodiless.is_some() {
                    self.buf.advance(5);
                    return Ok(bodiless);
                }
            }
        }
        Message::parse(&mut self.buf).map_err(|e| Error::Protocol(e.to_string()))
    }

    /// Makes sure at least [`READ_CHUNK`] bytes of spare capacity exist before a read.
    pub(crate) fn reserve_for_read(&mut self) {
        if self.buf.capacity() - self.buf.len() < READ_CHUNK {
            self.buf.reserve(READ_CHUNK);
        }
    }

    /// Drops all buffered bytes.
    pub fn clear(&mut self) {
        self.buf.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use postgres_protocol::message::backend::Message;

    /// Bodiless acknowledgements (popped without Message::parse) come out as the same
    /// messages, in order with the others, and a partial one waits for its last byte.
    #[test]
    fn bodiless_acknowledgements_in_order() {
        let mut r = MessageReader::new();
        r.extend(b"1\0\0\0\x042\0\0\0\x04n\0\0\0\x04C\0\0\0\x0dSELECT 1\0");
        r.extend(b"3\0\0\0\x04I\0\0\0\x04s\0\0\0\x04Z\0\0\0\x05I2\0\0");
        let mut tags = Vec::new();
        while let Some(m) = r.next_message().unwrap() {
            tags.push(match m {
                Message::ParseComplete => '1',
                Message::BindComplete => '2',
                Message::NoData => 'n',
                Message::CommandComplete(_) => 'C',
                Message::CloseComplete => '3',
                Message::EmptyQueryResponse => 'I',
                Message::PortalSuspended => 's',
                Message::ReadyForQuery(_) => 'Z',
                _ => '?',
            });
        }
        assert_eq!(tags.iter().collect::<String>(), "12nC3IsZ");
        r.extend(b"\0\x04");
        assert!(matches!(
            r.next_message().unwrap(),
            Some(Message::BindComplete)
        ));
        assert_eq!(r.buffered(), 0);
    }

    #[test]
    fn partial_then_complete() {
        let mut r = MessageReader::new();
        let msg = b"Z\0\0\0\x05I";
        for (i, b) in msg.iter().enumerate() {
            assert!(r.next_message().unwrap().is_none(), "at {i}");
            r.extend(&[*b]);
        }
        assert!(r.has_complete_message());
        match r.next_message().unwrap() {
            Some(Message::ReadyForQuery(b)) => assert_eq!(b.status(), b'I'),
            _ => panic!("expected ReadyForQuery"),
        }
        assert!(r.next_message().unwrap().is_none());
        assert_eq!(r.buffered(), 0);
    }

    #[test]
    fn several_in_one_read() {
        let mut r = MessageReader::new();
        r.extend(b"1\0\0\0\x042\0\0\0\x04C\0\0\0\x0dSELECT 1\0Z\0\0\0\x05T");
        let mut tags = Vec::new();
        while let Some(m) = r.next_message().unwrap() {
            tags.push(match m {
                Message::ParseComplete => '1',
                Message::BindComplete => '2',
                Message::CommandComplete(_) => 'C',
                Message::ReadyForQuery(_) => 'Z',
                _ => '?',
            });
        }
        assert_eq!(tags, vec!['1', '2', 'C', 'Z']);
    }

    #[test]
    fn huge_length_rejected_without_allocating() {
        let mut r = MessageReader::new();
        r.extend(b"D\xff\xff\xff\xff");
        assert!(matches!(r.next_message(), Err(Error::Protocol(_))));
        let mut r = MessageReader::new();
        r.extend(b"D\0\0\0\x02");
        assert!(matches!(r.next_message(), Err(Error::Protocol(_))));
    }

    #[test]
    fn unknown_tag_is_protocol_error() {
        let mut r = MessageReader::new();
        r.extend(b"!\0\0\0\x04");
        assert!(matches!(r.next_message(), Err(Error::Protocol(_))));
    }
}
