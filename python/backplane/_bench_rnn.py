"""The peer of ``python -m backplane.bench rnn --peer torch``: PyTorch's nn.LSTM / GRU / RNN module of the
same configuration (its CPU path: oneDNN or its own), timed as ``module(x)`` under ``torch.no_grad()``, on the
same input. NumPy has no RNN: no peer call then."""

def torch_rnn(kwargs):
    """A callable running PyTorch's module on the problem of the bench form's arguments ``kwargs``."""
    import torch

    mode = kwargs["mode"]
    common = dict(num_layers=kwargs["num_layers"], bidirectional=kwargs["bidirectional"])
    if mode == "LSTM":
        module = torch.nn.LSTM(kwargs["input_size"], kwargs["hidden_size"], proj_size=kwargs["proj_size"], **common)
    elif mode == "GRU":
        module = torch.nn.GRU(kwargs["input_size"], kwargs["hidden_size"], **common)
    else:
        module = torch.nn.RNN(kwargs["input_size"], kwargs["hidden_size"],
                              nonlinearity="relu" if mode == "RNN_RELU" else "tanh", **common)
    x = torch.from_dlpack(kwargs["input"])
    module = module.to(x.dtype).eval()

    def call():
        with torch.no_grad():
            return module(x)

    return call
