import Foundation
import ShutterWeb
import XCTest

/// `web.tlsCertificate` / `web.tlsKey`: the page over HTTPS with a self-signed
/// certificate made here by openssl (README "From a phone").
final class WebTLSTests: XCTestCase {
    func testThePageServesHTTPSWithASecureCookie() throws {
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
        defer { d.stop() }
        var url = ""
        try d.waitFor("the web page's https address", timeout: 10) {
            guard let r = d.log().range(of: #"web page on https://127\.0\.0\.1:[0-9]+"#, options: .regularExpression) else { return false }
            url = String(d.log()[r].dropFirst("web page on ".count))
            return true
        }
        setenv("CA_FILE", cert, 1)
        setenv("BASE_URL", url, 1)
        setenv("PASSWORD", WebEndToEndTests.password, 1)
        let (code, out, err) = try runTool("python3", [WebEndToEndTests.scripts + "/login_tls.py"])
        let text = out + err
        print(text)
        XCTAssertEqual(code, 0, "\(text)\nshutterd log:\n\(d.log().suffix(2000))")
        XCTAssertTrue(text.contains("plain HTTP on the TLS port gets no page"), text)
    }
}
