//! The bundle inside a zonky jar: a minimal zip reader (central directory, stored or
//! deflated entries) to reach the `.txz`, then xz and tar, unpacked into a directory.

use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom, Write};
use std::path::Path;

use crate::error::{Error, Result};

/// One entry of a zip central directory.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct ZipEntry {
    pub name: String,
    pub method: u16,
    pub compressed: u64,
    pub local_offset: u64,
}

fn le16(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

fn le32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// Parse a zip's central directory from its last `tail` bytes (plus the file for the directory).
pub(crate) fn zip_entries(f: &mut File) -> std::io::Result<Vec<ZipEntry>> {
    let bad = |m: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, m.to_string());
    let len = f.seek(SeekFrom::End(0))?;
    let tail_len = len.min(65536 + 22);
    f.seek(SeekFrom::Start(len - tail_len))?;
    let mut tail = vec![0u8; tail_len as usize];
    f.read_exact(&mut tail)?;
    let eocd = (0..tail.len().saturating_sub(21))
        .rev()
        .find(|&i| le32(&tail, i) == 0x0605_4b50)
        .ok_or_else(|| bad("not a zip file (no end of central directory)"))?;
    let count = le16(&tail, eocd + 10) as usize;
    let cd_size = le32(&tail, eocd + 12) as usize;
    let cd_off = u64::from(le32(&tail, eocd + 16));
    f.seek(SeekFrom::Start(cd_off))?;
    let mut cd = vec![0u8; cd_size];
    f.read_exact(&mut cd)?;
    let mut out = Vec::with_capacity(count);
    let mut i = 0;
    while out.len() < count {
        if i + 46 > cd.len() || le32(&cd, i) != 0x0201_4b50 {
            return Err(bad("corrupt zip central directory"));
        }
        let name_len = le16(&cd, i + 28) as usize;
        let extra_len = le16(&cd, i + 30) as usize;
        let comment_len = le16(&cd, i + 32) as usize;
        let name = cd
            .get(i + 46..i + 46 + name_len)
            .ok_or_else(|| bad("corrupt zip entry name"))?;
        out.push(ZipEntry {
            name: String::from_utf8_lossy(name).into_owned(),
            method: le16(&cd, i + 10),
            compressed: u64::from(le32(&cd, i + 20)),
            local_offset: u64::from(le32(&cd, i + 42)),
        });
        i += 46 + name_len + extra_len + comment_len;
    }
    Ok(out)
}

/// Reader over one entry's (decompressed) data.
fn zip_entry_reader(mut f: File, e: &ZipEntry) -> std::io::Result<Box<dyn Read>> {
    let mut h = [0u8; 30];
    f.seek(SeekFrom::Start(e.local_offset))?;
    f.read_exact(&mut h)?;
    if le32(&h, 0) != 0x0403_4b50 {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "corrupt zip local header",
        ));
    }
    let skip = u64::from(le16(&h, 26)) + u64::from(le16(&h, 28));
    f.seek(SeekFrom::Current(skip as i64))?;
    let raw = BufReader::new(f).take(e.compressed);
    match e.method {
        0 => Ok(Box::new(raw)),
        8 => Ok(Box::new(flate2::read::DeflateDecoder::new(raw))),
        m => Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("unsupported zip compression method {m}"),
        )),
    }
}

pub(super) fn unpack_jar(jar: &Path, dest: &Path, version: &str) -> Result<()> {
    let io =
        |e: std::io::Error| Error::download(version, format!("unpacking {}: {e}", jar.display()));
    let mut f = File::open(jar).map_err(io)?;
    let entries = zip_entries(&mut f).map_err(io)?;
    let e = entries
        .iter()
        .find(|e| e.name.ends_with(".txz"))
        .ok_or_else(|| {
            Error::download(version, format!("{} holds no .txz bundle", jar.display()))
        })?;
    let reader = zip_entry_reader(f, e).map_err(io)?;
    // xz -> tar file on disk (streaming both ways keeps memory flat).
    let tar_path = dest.join(".bundle.tar");
    {
        let mut tar_out = std::io::BufWriter::new(
            File::create(&tar_path).map_err(|e| Error::io("cannot create", &tar_path, e))?,
        );
        lzma_rs::xz_decompress(&mut BufReader::new(reader), &mut tar_out)
            .map_err(|e| Error::download(version, format!("bad .txz bundle: {e:?}")))?;
        tar_out
            .flush()
            .map_err(|e| Error::io("cannot write", &tar_path, e))?;
    }
    let tar_file = File::open(&tar_path).map_err(|e| Error::io("cannot open", &tar_path, e))?;
    let mut ar = tar::Archive::new(BufReader::new(tar_file));
    ar.set_preserve_permissions(true);
    ar.unpack(dest).map_err(|e| {
        if e.raw_os_error() == Some(libc::ENOSPC) {
            Error::DiskFull {
                path: dest.to_path_buf(),
                detail: "unpacking PostgreSQL binaries".into(),
            }
        } else {
            Error::download(version, format!("unpacking tar: {e}"))
        }
    })?;
    std::fs::remove_file(&tar_path).map_err(|e| Error::io("cannot remove", &tar_path, e))?;
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A stored (method 0) zip holding `name` -> `data`.
    pub(crate) fn zip_one(name: &str, data: &[u8]) -> Vec<u8> {
        let name = name.as_bytes();
        let mut z = Vec::new();
        z.extend_from_slice(&0x0403_4b50u32.to_le_bytes());
        z.extend_from_slice(&[20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        z.extend_from_slice(&(data.len() as u32).to_le_bytes());
        z.extend_from_slice(&(data.len() as u32).to_le_bytes());
        z.extend_from_slice(&(name.len() as u16).to_le_bytes());
        z.extend_from_slice(&0u16.to_le_bytes());
        z.extend_from_slice(name);
        z.extend_from_slice(data);
        let cd_off = z.len();
        z.extend_from_slice(&0x0201_4b50u32.to_le_bytes());
        z.extend_from_slice(&[20, 0, 20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        z.extend_from_slice(&(data.len() as u32).to_le_bytes());
        z.extend_from_slice(&(data.len() as u32).to_le_bytes());
        z.extend_from_slice(&(name.len() as u16).to_le_bytes());
        z.extend_from_slice(&[0; 12]);
        z.extend_from_slice(&0u32.to_le_bytes());
        z.extend_from_slice(name);
        let cd_size = z.len() - cd_off;
        z.extend_from_slice(&0x0605_4b50u32.to_le_bytes());
        z.extend_from_slice(&[0, 0, 0, 0, 1, 0, 1, 0]);
        z.extend_from_slice(&(cd_size as u32).to_le_bytes());
        z.extend_from_slice(&(cd_off as u32).to_le_bytes());
        z.extend_from_slice(&0u16.to_le_bytes());
        z
    }

    #[test]
    fn reads_a_zip_we_write() {
        let z = zip_one("postgres-linux-x86_64.txz", b"hello bundle");
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("t.jar");
        std::fs::write(&p, &z).expect("write");
        let mut f = File::open(&p).expect("open");
        let entries = zip_entries(&mut f).expect("entries");
        assert_eq!(entries.len(), 1);
        assert_eq!(entries[0].name, "postgres-linux-x86_64.txz");
        let mut s = String::new();
        zip_entry_reader(f, &entries[0])
            .expect("reader")
            .read_to_string(&mut s)
            .expect("read");
        assert_eq!(s, "hello bundle");
    }
}
