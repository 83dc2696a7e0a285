// SPDX-License-Identifier: BSD-2-Clause
/// A numeric listening address, "HOST:PORT": "0.0.0.0:8080", "127.0.0.1:0" (any
/// free port), "[::]:8080". Names are not resolved: a service binds before DNS works.
public struct ListenAddress: Equatable, Sendable, CustomStringConvertible {
    public var host: String
    public var port: Int

    public init?(parsing text: String) {
        let host: Substring, portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else { return nil }
            host = text[text.index(after: text.startIndex)..<close]
            portText = text[text.index(close, offsetBy: 2)...]
            guard !host.isEmpty, host.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }), host.contains(":") else { return nil }
        } else {
            guard let colon = text.lastIndex(of: ":") else { return nil }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
            let parts = host.split(separator: ".", omittingEmptySubsequences: false)
            guard parts.count == 4, parts.allSatisfy({ p in
                !p.isEmpty && p.count <= 3 && p.allSatisfy(\.isASCII) && p.allSatisfy(\.isNumber) && Int(p)! <= 255
            }) else { return nil }
        }
        guard !portText.isEmpty, portText.count <= 5, portText.allSatisfy({ $0.isASCII && $0.isNumber }),
              let port = Int(portText), (0...65535).contains(port) else { return nil }
        self.host = String(host)
        self.port = port
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
