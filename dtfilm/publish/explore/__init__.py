"""The explorer page (seed 000): the rack, strategy pills, a micro-batch slider, precision and
checkpointing switches, four stats and the film chapter of the pill, from the same cost model
and the same visuals as the film.

`states` enumerates the page's states and computes each one's numbers with the cost model;
`picture` draws a state's rack with the film's visuals into a still; `page` writes
renders/explore/ (index.html, states.js, the stills, the film chapters).
"""
