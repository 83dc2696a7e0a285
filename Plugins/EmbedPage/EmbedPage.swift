// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import PackagePlugin

/// Embeds the web page (Sources/ShutterWeb/Page: HTML, CSS, JavaScript as real
/// files) into ShutterWeb at build time: page-embedder writes them into one Swift
/// source with their SHA-256 (the ETag). Inside the binary, the page works from the
/// build directory, in tests and from the package alike, with nothing installed.
@main
struct EmbedPage: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        guard let module = target as? SourceModuleTarget else { return [] }
        let page = module.sourceFiles.map(\.url).filter { $0.deletingLastPathComponent().lastPathComponent == "Page" }
            .sorted { $0.path < $1.path }
        let output = context.pluginWorkDirectoryURL.appendingPathComponent("WebPage+Embedded.swift")
        return [.buildCommand(displayName: "Embedding the web page (\(page.count) files)",
                              executable: try context.tool(named: "page-embedder").url,
                              arguments: [output.path] + page.map(\.path),
                              inputFiles: page, outputFiles: [output])]
    }
}
