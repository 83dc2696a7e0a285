// SPDX-License-Identifier: BSD-2-Clause
import Foundation

// page-embedder OUTPUT FILE...: writes a Swift source holding each FILE's bytes
// (base64: one string literal compiles fast, a byte array does not) and SHA-256,
// as `WebPage.embedded`. Run by the EmbedPage build plugin for ShutterWeb.
let args = CommandLine.arguments
guard args.count >= 3 else {
    FileHandle.standardError.write(Data("usage: page-embedder OUTPUT.swift FILE...\n".utf8))
    exit(64)
}
var entries: [String] = []
for path in args.dropFirst(2).sorted() {
    let name = (path as NSString).lastPathComponent
    // The name goes into a string literal and a URL as it is.
    guard !name.isEmpty, name.utf8.allSatisfy({ b in
        (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x2E || b == 0x2D || b == 0x5F
    }) else {
        FileHandle.standardError.write(Data("page-embedder: \(path): a page file's name is letters, digits, '.', '-', '_'\n".utf8))
        exit(65)
    }
    guard let data = FileManager.default.contents(atPath: path) else {
        FileHandle.standardError.write(Data("page-embedder: cannot read \(path)\n".utf8))
        exit(66)
    }
    let bytes = [UInt8](data)
    entries.append("        \"\(name)\": WebPage.File(name: \"\(name)\", base64: \"\(data.base64EncodedString())\",\n"
                   + "                                sha256: \"\(SHA256.hex(bytes))\"),")
}
let source = """
    // Generated at build time by page-embedder (Plugins/EmbedPage) from Sources/ShutterWeb/Page.
    // Edit those files, not this one.

    extension WebPage {
        static let embedded: [String: WebPage.File] = [
    \(entries.joined(separator: "\n"))
        ]
    }

    """
do {
    // Rewritten only when it changed, so an unchanged page rebuilds nothing.
    let out = args[1]
    if FileManager.default.contents(atPath: out) != Data(source.utf8) {
        try source.write(toFile: out, atomically: true, encoding: .utf8)
    }
} catch {
    FileHandle.standardError.write(Data("page-embedder: cannot write \(args[1]): \(error)\n".utf8))
    exit(73)
}
