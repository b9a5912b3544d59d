//! quinn-bulk: one unidirectional QUIC stream of COUNT bytes from a client to a server on
//! loopback, written in pieces of SIZE bytes, one connection, a single-threaded runtime on
//! each side (as a pure-link endpoint runs on one thread).  The bench measures the CPU of
//! both processes; this program only moves the bytes and checks their count.
//!
//!   quinn-bulk server ADDR CERT.der KEY.der      prints "listening on IP:PORT", receives
//!                                                one stream, prints its byte count, exits
//!   quinn-bulk client ADDR CERT.der COUNT SIZE   sends COUNT bytes, waits for the server
//!                                                to close the connection, exits
use std::net::SocketAddr;

type Res<T> = Result<T, Box<dyn std::error::Error>>;

fn usage() -> ! {
    eprintln!("usage: quinn-bulk server ADDR CERT.der KEY.der | client ADDR CERT.der COUNT SIZE");
    std::process::exit(2)
}

async fn server(addr: SocketAddr, cert: Vec<u8>, key: Vec<u8>) -> Res<()> {
    let config = quinn::ServerConfig::with_single_cert(vec![rustls::Certificate(cert)], rustls::PrivateKey(key))?;
    let endpoint = quinn::Endpoint::server(config, addr)?;
    println!("listening on {}", endpoint.local_addr()?);
    use std::io::Write;
    std::io::stdout().flush()?;
    let conn = endpoint.accept().await.ok_or("endpoint closed")?.await?;
    let mut stream = conn.accept_uni().await?;
    let mut total: u64 = 0;
    while let Some(chunk) = stream.read_chunk(usize::MAX, true).await? {
        total += chunk.bytes.len() as u64;
    }
    conn.close(0u32.into(), b"done");
    endpoint.wait_idle().await;
    println!("received {}", total);
    Ok(())
}

async fn client(addr: SocketAddr, cert: Vec<u8>, count: u64, size: usize) -> Res<()> {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(&rustls::Certificate(cert))?;
    let mut endpoint = quinn::Endpoint::client("127.0.0.1:0".parse()?)?;
    endpoint.set_default_client_config(quinn::ClientConfig::with_root_certificates(roots));
    let conn = endpoint.connect(addr, "localhost")?.await?;
    let mut stream = conn.open_uni().await?;
    let piece = vec![0x5au8; size];
    let mut left = count;
    while left > 0 {
        let n = left.min(size as u64) as usize;
        stream.write_all(&piece[..n]).await?;
        left -= n as u64;
    }
    stream.finish().await?;
    conn.closed().await;  // the server closes once it has read every byte
    endpoint.wait_idle().await;
    Ok(())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 5 {
        usage();
    }
    let addr: SocketAddr = args[2].parse().unwrap_or_else(|_| usage());
    let cert = std::fs::read(&args[3]).unwrap_or_else(|e| {
        eprintln!("{}: {}", args[3], e);
        std::process::exit(1)
    });
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    let r = match (args[1].as_str(), args.len()) {
        ("server", 5) => {
            let key = std::fs::read(&args[4]).unwrap_or_else(|e| {
                eprintln!("{}: {}", args[4], e);
                std::process::exit(1)
            });
            rt.block_on(server(addr, cert, key))
        }
        ("client", 6) => {
            let count = args[4].parse().unwrap_or_else(|_| usage());
            let size = args[5].parse().unwrap_or_else(|_| usage());
            if size == 0 {
                usage();
            }
            rt.block_on(client(addr, cert, count, size))
        }
        _ => usage(),
    };
    if let Err(e) = r {
        eprintln!("quinn-bulk {}: {}", args[1], e);
        std::process::exit(1);
    }
}
