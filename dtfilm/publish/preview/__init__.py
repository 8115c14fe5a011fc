"""`dtfilm preview CHAPTER[:SHOT]`: a page on 127.0.0.1 showing one shot, drawn again at preview
quality on every save of a storyboard or the catalog, with the numbers and claims its texts
show and the one-line error of a save that does not load (dtfilm.publish.preview.server)."""
