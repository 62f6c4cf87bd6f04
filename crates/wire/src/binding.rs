//! SCRAM channel binding (`tls-server-end-point`, RFC 5929): the hash of the server's
//! certificate, computed with the hash its signature uses (SHA-256 for MD5/SHA-1).
//!
//! Only the certificate's outer `signatureAlgorithm` is read, with a minimal DER walk; an
//! algorithm without a defined binding hash (Ed25519, RSASSA-PSS, SHA-512) gives `None`,
//! and the exchange then goes without channel binding (or fails if it is required).

use rustls::crypto::hash::Hash;
use rustls::crypto::ring::cipher_suite::{TLS13_AES_128_GCM_SHA256, TLS13_AES_256_GCM_SHA384};

/// libpq `channel_binding`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ChannelBindingMode {
    /// Never use channel binding.
    Disable,
    /// Use it when TLS is on and the server offers SCRAM-SHA-256-PLUS (libpq's default).
    #[default]
    Prefer,
    /// Fail unless the server authenticates with channel binding.
    Require,
}

impl ChannelBindingMode {
    /// libpq's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            ChannelBindingMode::Disable => "disable",
            ChannelBindingMode::Prefer => "prefer",
            ChannelBindingMode::Require => "require",
        }
    }
}

impl std::str::FromStr for ChannelBindingMode {
    type Err = crate::error::ConfigError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match s {
            "disable" => ChannelBindingMode::Disable,
            "prefer" => ChannelBindingMode::Prefer,
            "require" => ChannelBindingMode::Require,
            _ => {
                return Err(crate::error::ConfigError::new(format!(
                    "invalid channel_binding value: \"{s}\""
                )))
            }
        })
    }
}

/// Reads one DER TLV at the start of `b`: (tag, content, rest).
fn tlv(b: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, rest) = b.split_first()?;
    let (&first, rest) = rest.split_first()?;
    let (len, rest) = if first < 0x80 {
        (first as usize, rest)
    } else {
        let n = (first & 0x7f) as usize;
        if n == 0 || n > 4 || rest.len() < n {
            return None;
        }
        let len = rest[..n].iter().fold(0usize, |a, &x| (a << 8) | x as usize);
        (len, &rest[n..])
    };
    if rest.len() < len {
        return None;
    }
    Some((tag, &rest[..len], &rest[len..]))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BindingHash {
    Sha256,
    Sha384,
}

/// The hash RFC 5929 prescribes for a certificate, from its signature algorithm OID.
fn binding_hash(cert_der: &[u8]) -> Option<BindingHash> {
    const RSA: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01];
    const ECDSA: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04];
    let (0x30, cert, _) = tlv(cert_der)? else {
        return None;
    };
    let (0x30, _tbs, rest) = tlv(cert)? else {
        return None;
    };
    let (0x30, alg, _) = tlv(rest)? else {
        return None;
    };
    let (0x06, oid, _) = tlv(alg)? else {
        return None;
    };
    if let Some(last) = oid.strip_prefix(RSA) {
        return match last {
            [0x04] | [0x05] | [0x0b] => Some(BindingHash::Sha256), // md5, sha1, sha256
            [0x0c] => Some(BindingHash::Sha384),
            _ => None,
        };
    }
    if let Some(last) = oid.strip_prefix(ECDSA) {
        return match last {
            [0x01] | [0x03, 0x02] => Some(BindingHash::Sha256), // sha1, sha256
            [0x03, 0x03] => Some(BindingHash::Sha384),
            _ => None,
        };
    }
    None
}

/// `tls-server-end-point` data for the server certificate, if it has a defined hash.
pub(crate) fn server_end_point(cert_der: &[u8]) -> Option<Vec<u8>> {
    let suite = match binding_hash(cert_der)? {
        BindingHash::Sha256 => TLS13_AES_128_GCM_SHA256,
        BindingHash::Sha384 => TLS13_AES_256_GCM_SHA384,
    };
    let hash: &dyn Hash = suite.tls13()?.common.hash_provider;
    Some(hash.hash(cert_der).as_ref().to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SEQUENCE { SEQUENCE {} , SEQUENCE { OID }, BIT STRING }
    fn fake_cert(oid: &[u8]) -> Vec<u8> {
        let mut alg = vec![0x06, oid.len() as u8];
        alg.extend_from_slice(oid);
        let mut body = vec![0x30, 0x00, 0x30, alg.len() as u8];
        body.extend_from_slice(&alg);
        body.extend_from_slice(&[0x03, 0x01, 0x00]);
        let mut c = vec![0x30, body.len() as u8];
        c.extend_from_slice(&body);
        c
    }

    #[test]
    fn hash_choice() {
        let ecdsa256 = fake_cert(&[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x02]);
        assert_eq!(binding_hash(&ecdsa256), Some(BindingHash::Sha256));
        assert_eq!(server_end_point(&ecdsa256).map(|h| h.len()), Some(32));
        let rsa384 = fake_cert(&[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x0c]);
        assert_eq!(server_end_point(&rsa384).map(|h| h.len()), Some(48));
        let rsa_sha1 = fake_cert(&[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x05]);
        assert_eq!(binding_hash(&rsa_sha1), Some(BindingHash::Sha256));
        let ed25519 = fake_cert(&[0x2b, 0x65, 0x70]);
        assert_eq!(binding_hash(&ed25519), None);
    }

    #[test]
    fn garbage_is_none() {
        assert_eq!(server_end_point(&[]), None);
        assert_eq!(
            server_end_point(&[0x30, 0x84, 0xff, 0xff, 0xff, 0xff]),
            None
        );
        assert_eq!(server_end_point(&[0x30, 0x03, 0x30, 0x05, 0x00]), None);
        for n in 0..=255u8 {
            let _ = server_end_point(&[0x30, n, 0x30, n, 0x30, n, 0x06, n]);
        }
    }
}
