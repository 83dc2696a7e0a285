// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import ShutterWeb
import XCTest

/// `web.tlsCertificate` / `web.tlsKey`: the page over HTTPS with a self-signed
/// certificate made here by openssl (docs/control-and-api.md "From a phone").
final class WebTLSTests: XCTestCase {
    /// shutterd with the page on https://127.0.0.1:PORT; (daemon, URL, certificate path).
    func startTLSDaemon() throws -> (DaemonHarness, String, String) {
        let dir = try DaemonHarness.makeTempDir()
        let cert = dir + "/cert.pem", key = dir + "/key.pem"
        let (made, _, opensslErr) = try runTool("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                                                     "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                                                     "-keyout", key, "-out", cert])
        XCTAssertEqual(made, 0, opensslErr)
        let hash = try XCTUnwrap(PasswordHash.make(WebEndToEndTests.password))
        let d = try DaemonHarness(config: """
            {"web": {"enabled": true, "listen": "127.0.0.1:0", "passwordHash": "\(hash)",
                     "tlsCertificate": "\(cert)", "tlsKey": "\(key)"}}
            """)
        try d.start()
        var url = ""
        try d.waitFor("the web page's https address", timeout: 10) {
            guard let r = d.log().range(of: #"web page on https://127\.0\.0\.1:[0-9]+"#, options: .regularExpression) else { return false }
            url = String(d.log()[r].dropFirst("web page on ".count))
            return true
        }
        return (d, url, cert)
    }

    func testThePageServesHTTPSWithASecureCookie() throws {
        let (d, url, cert) = try startTLSDaemon()
        defer { d.stop() }
        setenv("CA_FILE", cert, 1)
        setenv("BASE_URL", url, 1)
        setenv("PASSWORD", WebEndToEndTests.password, 1)
        let (code, out, err) = try runTool("python3", [WebEndToEndTests.scripts + "/login_tls.py"])
        let text = out + err
        print(text)
        XCTAssertEqual(code, 0, "\(text)\nshutterd log:\n\(d.log().suffix(2000))")
        XCTAssertTrue(text.contains("plain HTTP on the TLS port gets no page"), text)
        XCTAssertTrue(text.contains("renegotiation refused with no_renegotiation"), text)
    }

    /// Debian's testssl.sh against the page (issue 23 item 5): TLS 1.2 and 1.3 only,
    /// AEAD ciphers only, client-initiated renegotiation refused, no finding above LOW.
    func testTestsslFindsNoOldProtocolNoCBCAndNoRenegotiation() throws {
        let testssl = "/usr/bin/testssl"
        guard FileManager.default.isExecutableFile(atPath: testssl) else {
            throw XCTSkip("\(testssl) missing: `sh deploy/install-deps.sh --test` installs Debian's testssl.sh")
        }
        let (d, url, _) = try startTLSDaemon()
        defer { d.stop() }
        let json = try DaemonHarness.makeTempDir() + "/testssl.json"
        let host = String(url.dropFirst("https://".count))
        // -p protocols, -s cipher categories, -E each cipher per protocol, -U vulnerabilities.
        let (_, out, err) = try runTool(testssl, ["-p", "-s", "-E", "-U", "--warnings", "off", "--quiet", "--color", "0",
                                                  "--jsonfile", json, host])
        print(out)
        let data = try Data(contentsOf: URL(fileURLWithPath: json))
        let findings = try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [[String: Any]], err)
        var by: [String: (severity: String, finding: String)] = [:]
        for f in findings {
            if let id = f["id"] as? String { by[id] = (f["severity"] as? String ?? "", f["finding"] as? String ?? "") }
        }
        func finding(_ id: String) -> String { by[id]?.finding ?? "(absent)" }
        for id in ["SSLv2", "SSLv3", "TLS1", "TLS1_1"] {
            XCTAssertTrue(finding(id).hasPrefix("not offered"), "\(id): \(finding(id))")
        }
        XCTAssertEqual(finding("TLS1_2"), "offered")
        XCTAssertTrue(finding("TLS1_3").hasPrefix("offered"), "TLS1_3: \(finding("TLS1_3"))")
        // AVERAGE is testssl 3.0's "Obsolete CBC ciphers (AES, ARIA etc.)".
        for id in ["cipherlist_NULL", "cipherlist_aNULL", "cipherlist_EXPORT", "cipherlist_LOW", "cipherlist_3DES_IDEA",
                   "cipherlist_AVERAGE"] {
            XCTAssertTrue(finding(id).hasPrefix("not offered"), "\(id): \(finding(id))")
        }
        let ciphers = by.filter { $0.key.hasPrefix("cipher-tls") }
        XCTAssertTrue(ciphers.keys.contains { $0.hasPrefix("cipher-tls1_2_") } && ciphers.keys.contains { $0.hasPrefix("cipher-tls1_3_") },
                      "ciphers listed for TLS 1.2 and 1.3: \(ciphers.keys.sorted())")
        for (id, c) in ciphers {
            XCTAssertTrue(c.finding.contains("AESGCM") || c.finding.contains("ChaCha20"), "\(id) is not AEAD: \(c.finding)")
        }
        XCTAssertEqual(by["secure_renego"]?.finding, "supported")
        XCTAssertEqual(by["secure_client_renego"]?.severity, "OK", finding("secure_client_renego"))
        XCTAssertFalse(finding("secure_client_renego").contains("VULNERABLE"), finding("secure_client_renego"))
        for id in ["BEAST", "LUCKY13", "SWEET32", "POODLE_SSL", "ROBOT", "CRIME_TLS"] {
            XCTAssertEqual(by[id]?.severity, "OK", "\(id): \(finding(id))")
        }
        let serious = findings.filter { ["MEDIUM", "HIGH", "CRITICAL"].contains($0["severity"] as? String ?? "") }
        XCTAssertEqual(serious.count, 0, "\(serious)")
        XCTAssertEqual(d.process?.isRunning, true, "shutterd is still running after the scan")
    }
}
