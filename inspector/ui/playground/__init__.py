"""Trying the servers' tools with a model, in the window:

- `connections`: `ModelBook` (the model connections, their keys in the OS keyring) and `ConnectionsEditor`
  (Preferences → Models);
- `view`: `PlaygroundView` (`playgroundView`), a chat whose tool calls run as manual calls do;
- `transcript`: the chat's transcript (`playgroundTranscript`), each call rendered by the tool panel's
  `ResultView`;
- `choice_view`: `ToolChoiceView` (`toolChoiceView`), which tool a model picks for plain requests.
"""

__all__ = ["choice_view", "connections", "transcript", "view"]
