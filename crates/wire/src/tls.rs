//! TLS client configuration for each `sslmode`, with rustls and the ring provider.
//!
//! `require` encrypts but trusts any certificate (as libpq does); `verify-ca` checks the
//! chain against `sslrootcert` (a PEM file, or `system` for the OS's roots; default
//! `~/.postgresql/root.crt` if present, else the OS's roots) but not the host name;
//! `verify-full` checks both. libpq's rule that `require` with an explicit `sslrootcert`
//! behaves like `verify-ca` is kept.

use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::{CryptoProvider, WebPkiSupportedAlgorithms};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};
use std::path::PathBuf;

use crate::config::SslMode;
use crate::resolve::ConnectParams;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Check {
    Nothing,
    Chain,
    ChainAndName,
}

#[derive(Debug)]
struct Verifier {
    check: Check,
    webpki: Option<Arc<WebPkiServerVerifier>>,
    algs: WebPkiSupportedAlgorithms,
}

impl ServerCertVerifier for Verifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let Some(webpki) = self
            .webpki
            .as_ref()
            .filter(|_| self.check != Check::Nothing)
        else {
            return Ok(ServerCertVerified::assertion());
        };
        match webpki.verify_server_cert(end_entity, intermediates, server_name, ocsp, now) {
            Ok(v) => Ok(v),
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) if self.check == Check::Chain => Ok(ServerCertVerified::assertion()),
            Err(e) => Err(e),
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algs)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algs)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algs.supported_schemes()
    }
}

fn root_store(params: &ConnectParams) -> Result<RootCertStore, String> {
    let mut roots = RootCertStore::empty();
    let file = match params.sslrootcert.as_deref() {
        Some("system") => None,
        Some(f) => Some(PathBuf::from(f)),
        None => params
            .home
            .as_ref()
            .map(|h| h.join(".postgresql/root.crt"))
            .filter(|p| p.exists()),
    };
    match file {
        Some(path) => {
            let iter = CertificateDer::pem_file_iter(&path).map_err(|e| {
                format!(
                    "could not read root certificate file \"{}\": {e}",
                    path.display()
                )
            })?;
            for cert in iter {
                let cert = cert.map_err(|e| {
                    format!(
                        "could not read root certificate file \"{}\": {e}",
                        path.display()
                    )
                })?;
                roots.add(cert).map_err(|e| {
                    format!(
                        "could not load root certificate from \"{}\": {e}",
                        path.display()
                    )
                })?;
            }
            if roots.is_empty() {
                return Err(format!(
                    "no certificates found in root certificate file \"{}\"",
                    path.display()
                ));
            }
        }
        None => {
            let native = rustls_native_certs::load_native_certs();
            for cert in native.certs {
                // Skip certificates webpki cannot parse, as browsers do.
                let _ = roots.add(cert);
            }
            if roots.is_empty() {
                return Err("no system root certificates found (set sslrootcert)".into());
            }
        }
    }
    Ok(roots)
}

/// Builds the rustls client configuration for `params.sslmode` (`None` for `disable`).
pub(crate) fn client_config(params: &ConnectParams) -> Result<Option<Arc<ClientConfig>>, String> {
    let check = match params.sslmode {
        SslMode::Disable => return Ok(None),
        SslMode::Allow | SslMode::Prefer => Check::Nothing,
        SslMode::Require if params.sslrootcert_explicit => Check::Chain,
        SslMode::Require => Check::Nothing,
        SslMode::VerifyCa => Check::Chain,
        SslMode::VerifyFull => Check::ChainAndName,
    };
    let provider: Arc<CryptoProvider> = Arc::new(rustls::crypto::ring::default_provider());
    let webpki = if check == Check::Nothing {
        None
    } else {
        let roots = root_store(params)?;
        Some(
            WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
                .build()
                .map_err(|e| e.to_string())?,
        )
    };
    let verifier = Verifier {
        check,
        webpki,
        algs: provider.signature_verification_algorithms,
    };
    let builder = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(verifier));
    let config = match client_cert(params)? {
        Some((certs, key)) => builder
            .with_client_auth_cert(certs, key)
            .map_err(|e| format!("could not use client certificate: {e}"))?,
        None => builder.with_no_client_auth(),
    };
    Ok(Some(Arc::new(config)))
}

/// The client certificate chain and key: `sslcert`/`sslkey`, or
/// `~/.postgresql/postgresql.{crt,key}` when that certificate exists.
fn client_cert(
    params: &ConnectParams,
) -> Result<Option<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>)>, String> {
    let home = |f: &str| params.home.as_ref().map(|h| h.join(".postgresql").join(f));
    let cert = match &params.sslcert {
        Some(c) => PathBuf::from(c),
        None => match home("postgresql.crt").filter(|p| p.exists()) {
            Some(p) => p,
            None => return Ok(None),
        },
    };
    if params.sslcert.is_some() && !cert.exists() {
        // libpq silently skips a missing client certificate.
        return Ok(None);
    }
    let key = match &params.sslkey {
        Some(k) => PathBuf::from(k),
        None => home("postgresql.key").unwrap_or_else(|| cert.with_extension("key")),
    };
    let certs = CertificateDer::pem_file_iter(&cert)
        .and_then(|it| it.collect::<Result<Vec<_>, _>>())
        .map_err(|e| {
            format!(
                "could not load client certificate file \"{}\": {e}",
                cert.display()
            )
        })?;
    if certs.is_empty() {
        return Err(format!(
            "no certificate in client certificate file \"{}\"",
            cert.display()
        ));
    }
    check_key_permissions(&key)?;
    let key_der = PrivateKeyDer::from_pem_file(&key)
        .map_err(|e| format!("could not load private key file \"{}\": {e}", key.display()))?;
    Ok(Some((certs, key_der)))
}

/// libpq's rule: a key owned by the user must be u=rw (0600) or less; one owned by root
/// may also be group-readable (0640).
fn check_key_permissions(key: &std::path::Path) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(key).map_err(|e| {
        format!(
            "could not access private key file \"{}\": {e}",
            key.display()
        )
    })?;
    if !meta.is_file() {
        return Err(format!(
            "private key file \"{}\" is not a regular file",
            key.display()
        ));
    }
    let mode = meta.mode();
    let bad = if meta.uid() == 0 {
        mode & 0o037
    } else {
        mode & 0o077
    };
    if bad != 0 {
        return Err(format!(
            "private key file \"{}\" has group or world access; file must have permissions u=rw (0600) or less if owned by the current user, or permissions u=rw,g=r (0640) or less if owned by root",
            key.display()
        ));
    }
    Ok(())
}

/// The name rustls checks and sends as SNI: the host name, or the address literal.
pub(crate) fn server_name(host: &str, addr: Option<std::net::IpAddr>) -> ServerName<'static> {
    if let Ok(n) = ServerName::try_from(host.to_string()) {
        return n;
    }
    match addr {
        Some(ip) => ServerName::IpAddress(ip.into()),
        None => ServerName::IpAddress(std::net::IpAddr::from([127, 0, 0, 1]).into()),
    }
}
