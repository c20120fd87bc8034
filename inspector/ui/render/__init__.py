"""How results look: `results` (one widget per content block: `ContentView`, `TextView`, `SafeMarkdown`,
images, audio, resources, links) and `result_view` (`ResultView`, the outcome of one call)."""

__all__ = ["result_view", "results"]
