"""Cross-attention (lesson 13): the layer (layer.py), a small encoder-decoder that reverses words
(model.py), its training and shipped weights (training.py), the words its training never drew
(held_out.py), its questions (questions.py)."""
