"""Each lesson's check-yourself questions where the lesson has no maths module of its own (it
teaches the layer itself: ops.py, layer.py, masks.py), one module per lesson named after its page.
The others' live beside their maths (docs/architecture.md); what several lessons use is
attention.questions."""
