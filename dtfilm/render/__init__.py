"""`dtfilm render`: which shots are stale, drawing them (here or on a cluster), the shot and chapter
caches, joining clips into chapters and the film, with their sound and sidecars."""
