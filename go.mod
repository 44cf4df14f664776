module lipformer

go 1.26.8
